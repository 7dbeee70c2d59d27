// Crafted history blocks: every count in a block is checked against the
// bytes that follow it, and what a block may decode to is capped, so a
// small hostile blob is rejected with one CodecError line instead of
// allocating gigabytes (or quietly decoding into a huge structure).
#include <gtest/gtest.h>
#include <zstd.h>

#include <string>

#include "store/block_codec.h"
#include "store/byte_io.h"
#include "store/process_columns.h"
#include "store_test_util.h"

namespace gd::store {
namespace {

using testing::kT0;
using testing::make_sample;

std::string zstd(const std::string& raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// The error decode_numeric gives for the raw (uncompressed) numeric
// stream, or "" when it decodes.
std::string numeric_error(const std::string& raw) {
  try {
    decode_numeric(zstd(raw));
  } catch (const CodecError& e) {
    return e.what();
  }
  return "";
}

// Format 3, `n` samples whose time column is the constant kT0 (one byte
// says "every sample"), no field names, no GPUs.
ByteWriter header(uint64_t n) {
  ByteWriter w;
  w.varint(3);  // format
  w.varint(n);
  w.byte(1);  // presence: all
  w.byte(1);  // kind: decimal, scale 10^0
  w.byte(3);  // constant run
  w.varint(zigzag(static_cast<uint64_t>(kT0)));
  return w;
}

TEST(HostileBlock, SampleCountBeyondAnyRealBlockIsRejected) {
  // The red team's shape: a huge sample count, a constant time column and
  // zeros to make the count look backed by bytes (zstd squeezes them out).
  ByteWriter w = header(4'000'000);
  w.data().append(4'000'000, '\0');
  EXPECT_NE(numeric_error(w.data()).find("4000000 samples (a block has at most "
                                         "4096)"),
            std::string::npos)
      << numeric_error(w.data());
}

TEST(HostileBlock, CountsMustFitTheBytesLeft) {
  ByteWriter w = header(10);
  w.varint(1'000'000);  // GPU field names, but only a few bytes follow
  w.data().append(16, '\0');
  EXPECT_NE(numeric_error(w.data()).find("implausible count of field names"),
            std::string::npos)
      << numeric_error(w.data());
}

TEST(HostileBlock, GpuSectionsNeedTheirColumnsBytes) {
  // 64 field names then 2,000 GPUs: each GPU needs an index and 64
  // columns, so 2,000 of them cannot fit in ~2,000 bytes.
  ByteWriter w = header(10);
  w.varint(64);
  for (int i = 0; i < 64; ++i) w.str("util_pct");
  w.varint(0);  // host field names
  w.varint(2000);
  w.data().append(2100, '\0');
  EXPECT_NE(numeric_error(w.data()).find("implausible count of GPUs"),
            std::string::npos)
      << numeric_error(w.data());
}

TEST(HostileBlock, RepeatedGpuIndexIsRejected) {
  ByteWriter w = header(1);
  w.varint(0);  // GPU field names
  w.varint(0);  // host field names
  w.varint(2);
  w.svarint(7);
  w.svarint(7);
  EXPECT_NE(numeric_error(w.data()).find("repeated GPU index 7"),
            std::string::npos)
      << numeric_error(w.data());
}

// A process section where every sample repeats ("same as before", one
// byte) a list of `listed` entries: a few KB that say billions of listings.
std::string repeated_lists(size_t samples, size_t listed,
                           size_t cmdline_bytes = 1) {
  ByteWriter w = header(samples);
  w.varint(0);   // GPU field names
  w.varint(0);   // host field names
  w.varint(0);   // GPUs
  w.varint(1);   // one process entry
  w.varint(42);  // pid
  w.str("u");
  w.str("n");
  w.str(std::string(cmdline_bytes, 'c'));
  w.byte(0);    // flags
  w.varint(0);  // libraries
  w.byte(2);    // sample 0: a new list
  w.varint(listed);
  for (size_t i = 0; i < listed; ++i) w.varint(0);
  for (size_t i = 1; i < samples; ++i) w.byte(1);  // the same list again
  w.varint(0);                                     // states
  for (int c = 0; c < 6; ++c) w.byte(0);           // six empty columns
  return w.data();
}

TEST(HostileBlock, RepeatedProcessListsAreChargedByWhatTheyCopy) {
  // 4096 samples x 20,000 listings of one process: ~20 KB of stream that
  // would build 82 million listings (gigabytes once they become samples).
  const std::string err = numeric_error(repeated_lists(4096, 20000));
  EXPECT_NE(err.find("block would decode to more than 512 MiB"),
            std::string::npos)
      << err;
}

TEST(HostileBlock, ALongCommandLineListedByEverySampleIsCharged) {
  // One process with a 1 MB command line, listed by 4096 samples: 1 MB of
  // stream that would copy 4 GB of command lines into the samples.
  const std::string err = numeric_error(repeated_lists(4096, 1, 1 << 20));
  EXPECT_NE(err.find("block would decode to more than 512 MiB (process "
                     "listings)"),
            std::string::npos)
      << err;
}

TEST(HostileBlock, ProcessCountMustFitTheBytesLeft) {
  ByteWriter w = header(1);
  w.varint(0);
  w.varint(0);
  w.varint(0);
  w.varint(100'000);  // process entries, each >= 13 bytes
  w.data().append(100'000, '\0');
  EXPECT_NE(numeric_error(w.data()).find("implausible count of processes"),
            std::string::npos)
      << numeric_error(w.data());
}

TEST(HostileBlock, DecompressedSizeIsBounded) {
  // 100 MiB of zeros compress to a few KB; no real blob is that large.
  const std::string bomb = zstd(std::string(100u << 20, '\0'));
  EXPECT_LT(bomb.size(), 64u * 1024);
  try {
    decode_numeric(bomb);
    ADD_FAILURE() << "decoded";
  } catch (const CodecError& e) {
    EXPECT_STREQ(e.what(),
                 "block decompresses to 104857600 bytes (at most 32 MiB)");
  }
}

TEST(HostileBlock, NewerBlockFormatIsNamedAsSuch) {
  ByteWriter w;
  w.varint(4);
  try {
    decode_numeric(zstd(w.data()));
    ADD_FAILURE() << "decoded";
  } catch (const NewerBlockFormat& e) {
    EXPECT_STREQ(e.what(),
                 "block format 4 is newer than this gpudoctor reads (3)");
  }
}

TEST(HostileBlock, TheLargestRealBlockStillDecodes) {
  // kMaxBlockSamples samples of 8 GPUs with a handful of processes: what
  // sub-second sampling seals. It must stay well inside the cap.
  std::vector<Sample> in;
  for (size_t i = 0; i < kMaxBlockSamples; ++i)
    in.push_back(make_sample(kT0 + i * 0.1, static_cast<int>(i), 8));
  auto enc = encode_block(in, 3);
  auto out = decode_block(enc.numeric, enc.rest);
  ASSERT_EQ(out.size(), in.size());
  EXPECT_EQ(out.back().gpus.size(), 8u);
  EXPECT_EQ(*out.back().gpus[7].power_w, *in.back().gpus[7].power_w);
}

TEST(HostileBlock, TenMinutesOfABusyNodeStillDecode) {
  // 600 samples (1 s) of 8 GPUs, each listing the 512 processes a sample
  // keeps at most, with long command lines and changing numbers: a real
  // block at its heaviest must not be mistaken for a crafted one.
  std::vector<Sample> in;
  for (int i = 0; i < 600; ++i) {
    Sample s = make_sample(kT0 + i, i, 8);
    for (uint32_t p = 0; p < 512; ++p) {
      ProcessSample ps;
      ps.pid = 1000 + p;
      ps.ppid = 1;
      ps.user = "user" + std::to_string(p % 7);
      ps.name = "worker";
      ps.cmdline =
          "python train.py --rank " + std::to_string(p) + std::string(200, 'x');
      ps.state = "R";
      ps.cpu_pct = (i * 7 + p) % 100;
      ps.threads = 8;
      ps.rss_bytes = 1000000ull * p + i;
      s.processes.push_back(ps);
    }
    in.push_back(std::move(s));
  }
  auto enc = encode_block(in, 3);
  auto out = decode_block(enc.numeric, enc.rest);
  ASSERT_EQ(out.size(), in.size());
  ASSERT_EQ(out.back().processes.size(), in.back().processes.size());
  EXPECT_EQ(out.back().processes[511].cmdline,
            in.back().processes[511].cmdline);
}

TEST(HostileBlock, BudgetNamesWhatOverflows) {
  DecodeBudget b;
  b.charge(1, kMaxDecodedBytes - 8, "cells");
  EXPECT_EQ(b.used(), kMaxDecodedBytes - 8);
  try {
    b.charge(2, 8, "process listings");
    ADD_FAILURE() << "charged past the cap";
  } catch (const CodecError& e) {
    EXPECT_STREQ(e.what(),
                 "block would decode to more than 512 MiB (process listings)");
  }
}

}  // namespace
}  // namespace gd::store
