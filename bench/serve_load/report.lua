-- wrk script: after the run, prints throughput and latency percentiles as
-- "key value" lines that run.sh reads (wrk's own --latency table rounds and
-- mixes units).
done = function(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format("requests %d\n", summary.requests))
  io.write(string.format("errors %d\n", e.connect + e.read + e.write + e.status + e.timeout))
  io.write(string.format("rps %.0f\n", summary.requests / seconds))
  if summary.requests > 0 then
    io.write(string.format("bytes_per_request %.0f\n", summary.bytes / summary.requests))
  end
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("p%s_ms %.3f\n", p, latency:percentile(p) / 1000))
  end
  io.write(string.format("max_ms %.3f\n", latency.max / 1000))
end
