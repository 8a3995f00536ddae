// Shared helpers of the cost benches: locating the corpus, picking modules by size, timing
// an executor with the protocol.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cost/evaluate.h"
#include "ir/module.h"

namespace hlox::bench {

// Corpus *.hlo files: $HLOX_CORPUS, else <source>/../shared/hlo; sorted.
std::vector<std::string> CorpusFiles();
// Short name of a path (file name without .hlo).
std::string ModuleName(const std::string& path);
// Runs `fn` in a forked child so a crashing kernel costs one module, not the bench. Returns
// an empty string on success, else what killed the child. The child may arm alarm() itself.
std::string RunIsolated(const std::function<void()>& fn);
// Seconds of one run of `module` on seeded inputs (negative when it cannot build or run).
double TimeOneRun(const Module& module, int threads);

// The machine-noise reference module: x*y+z then exp over n f32 (16K: in cache; 16M: 64 MB per
// array, DRAM bandwidth).
std::string ReferenceHlo(int64_t n);

// Median seconds per run of `module` under `protocol` (seeded inputs), or a negative value when
// it cannot be built or run.
CostDistribution MeasureModule(const Module& module, const TimingProtocol& protocol, uint64_t seed,
                               int threads, bool* ok);

// MeasureModule with the protocol's host reference, also returning the reference run times at
// every sample boundary (samples + 1 of each kind that ran). The protocol's guards must be off
// (every sample kept) for the boundaries to line up with the samples.
CostDistribution MeasureModuleBoundaries(const Module& module, const TimingProtocol& protocol,
                                         uint64_t seed, int threads, bool* ok,
                                         std::vector<double>* compute, std::vector<double>* memory);

}  // namespace hlox::bench
