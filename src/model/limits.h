// What a value of the model can be, for the sources to leave out what no
// GPU has and for the trace reader to refuse it: what one command writes
// (export --prometheus), the others read.
#pragma once

namespace gd {

// Xid codes are positive and small (the catalogue's highest is in the
// hundreds); the kernel prints them as an unsigned 16-bit-range number.
inline constexpr int kMaxXidCode = 65535;

// The most a GPU's power limit can be, in W: no GPU draws 10 kW (the
// largest of today are limited to under 2 kW). A limit beyond it (1e308
// from a hostile series) is no limit: the sources leave it out and the
// trace reader refuses it, so it can never lift the energy sanity bound.
inline constexpr double kMaxPowerLimitW = 10000;

}  // namespace gd
