// Counter-based random streams (Random123 Philox4x32-10) keyed by (seed, client, round, purpose).
//
// Why counter-based: a stream's i-th number depends only on its key and i, never on which thread drew
// what before, so a seed reproduces the same bits on any platform and any thread count, and a long
// vector of noise can be filled in parallel chunks with identical results.
//
// Key layout (docs/design.md "Random streams"): Philox key = the 64-bit seed; the 128-bit counter is
// {block index low 32 bits, purpose (8 bits) | block index high 24 bits, client, round}. Each block
// yields four 32-bit words. The Gaussian sampler is our own (Box–Muller on 53-bit uniforms, with ln, sin and
// cos evaluated from their series in IEEE basic operations), so neither a standard-library distribution nor
// libm (whose outputs differ between implementations) is involved.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace asyncdp {

// What a stream is used for. Distinct purposes never share bits. Values are part of the reproducibility
// contract: never renumber, only append.
enum class StreamPurpose : uint8_t {
  kBatchSampling = 1,   // which records a client's round samples
  kGradientNoise = 2,   // the N(0, C^2 sigma^2 I) draw added to a round's clipped sum
  kModelInit = 3,       // initial parameters
  kPartition = 4,       // splitting a data set into client shards / test split
  kClientSpeed = 5,     // virtual runtime: per-client speed factors
  kLatency = 6,         // virtual runtime: message latencies
  kUtilityNoise = 7,    // utility graph: noisy copies of w*
  kFaults = 8,          // fault injection draws
  kAuditCanaries = 9,   // privacy audit: which canaries a run includes, which record is mislabelled
  kAccuracyCheck = 10,  // proactive framework: the Gaussian noise of a private accuracy check (client, check)
  kClipCount = 11,      // adaptive clipping: the noise of a round's count of unclipped examples (client, round)
  kCheckIn = 20,        // random check-ins: a client's participation coin and step (client, window)
  kCheckInSelection = 21,  // random check-ins: the server's choice among a step's clients (step, window)
  kTest = 255,          // tests only
};

struct StreamKey {
  uint64_t seed = 0;
  uint32_t client = 0;
  uint32_t round = 0;
  StreamPurpose purpose = StreamPurpose::kTest;
};

// The four 32-bit words of block `block` of the stream `key`. Pure function.
std::array<uint32_t, 4> PhiloxBlock(const StreamKey& key, uint64_t block);

// Uniform double in the open interval (0, 1) from a 64-bit word (53 significant bits, never 0 or 1).
inline double UniformFromBits(uint64_t bits) {
  // The top value (2^53 - 0.5) 2^-53 = 1 - 2^-54 rounds to 1.0 in double, so it is mapped to the largest
  // double below 1 (1 - 2^-53); every other input is unaffected.
  const double u = (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);  // 2^-53
  return u < 1.0 ? u : 1.0 - 1.0 / 9007199254740992.0;
}

// A sequential reader over one stream. Cheap to construct (no allocation); not thread-safe — give each
// thread its own stream (different key) or use the index-addressable functions below.
class RandomStream {
 public:
  explicit RandomStream(const StreamKey& key, uint64_t first_block = 0) : key_(key), block_(first_block) {}

  uint32_t NextU32();
  uint64_t NextU64();
  double NextUniform();              // in (0, 1)
  double NextNormal();               // standard normal
  double NextExponential();          // rate 1
  uint64_t NextBelow(uint64_t n);    // uniform in [0, n), unbiased (rejection); n > 0
  const StreamKey& key() const { return key_; }

 private:
  StreamKey key_;
  uint64_t block_;
  std::array<uint32_t, 4> words_{};
  int next_word_ = 4;  // words_ exhausted
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

// Standard normals addressed by index: normals 2b and 2b+1 come from block b (Box–Muller on the block's
// two 64-bit words, with our own ln, sin and cos built from IEEE basic operations only — see random.cc).
// out[j] = z_{first + j}. Vectorised (16 normals per step) where AVX-512 is available, with the same bits
// as the scalar path, so results depend neither on the platform nor on where a range starts.
void FillStandardNormal(const StreamKey& key, uint64_t first, std::span<double> out);

// out[j] += stddev * z_j for j = 0..out.size()-1, with z_j the j-th normal of the stream. This is how the
// Gaussian mechanism's noise N(0, stddev^2 I) is added (once per round, to the clipped sum). The result
// depends on (key, j) only, so the same key gives the same bits whatever thread runs it.
void AddGaussianNoise(const StreamKey& key, double stddev, std::span<float> out);
void AddGaussianNoise(const StreamKey& key, double stddev, std::span<double> out);
// The same for coordinates [first, first + out.size()) of the noise vector: out[j] += stddev * z_{first+j}.
// For float the product is rounded to float and then added; for double it is one fused multiply-add.
void AddGaussianNoise(const StreamKey& key, double stddev, uint64_t first, std::span<float> out);
void AddGaussianNoise(const StreamKey& key, double stddev, uint64_t first, std::span<double> out);

}  // namespace asyncdp
