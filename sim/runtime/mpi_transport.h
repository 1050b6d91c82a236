// The MPI side of the MPI runtime (sim/runtime/mpi_runtime.h): message tags and wire formats, block
// placement of clients on ranks, and a non-blocking endpoint that sends with MPI_Isend, receives with
// MPI_Improbe + MPI_Mrecv and keeps every send buffer alive until MPI_Test says it has left.
//
// Only one thread per rank calls MPI (MPI_THREAD_FUNNELED): the rank's communication loop. Nothing here
// blocks inside MPI: Open MPI's blocking calls spin in its progress engine and would burn a core while idle,
// so the loops poll with MPI_Improbe and sleep between empty polls (IdleBackoff).
//
// Wire formats (all MPI_BYTE, little-endian host layout; every rank runs the same binary):
//   kUpdate     client → 0   int64 client, int64 local_round, int64 computed_at, double η̄_i, then P floats U
//                            (every field of UpdateMessage: EncodeUpdate / DecodeUpdate)
//   kStop       client → 0   int64 client, int64 total_rounds (it will send no round ≥ total_rounds)
//   kBroadcast  0 → rank     int64 k, then P floats v̂_k
//   kHeartbeat  both ways    empty: "this rank is alive" when it has sent nothing else for a while
//   kShutdown   0 → rank     empty: the run is over; answer with kOutcome and stop
//   kOutcome    rank → 0     int64 words (EncodeOutcome)
//   kPause      client → 0   int64 client, int64 rounds sent: at its accuracy target, it computes no more for
//   now kResume     client → 0   int64 client, int64 its next local round: a received model fell below target
//   kSettled    client → 0   int64 client, int64 k: paused and holding v̂_k (run bookkeeping, as on threads)
//   kIdle       rank → 0     int64 k: every client it hosts has stopped or waits for a broadcast newer than
//                            v̂_k, and nothing is in its timer queue: it sends nothing more until then (sent
//                            with protocol.exclude_after only, once per v̂_k; rank 0 skips idle time on it)
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/protocol/messages.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim::mpi {

enum Tag : int {
  kUpdate = 1,
  kStop = 2,
  kBroadcast = 3,
  kHeartbeat = 4,
  kShutdown = 5,
  kOutcome = 6,
  kPause = 7,
  kResume = 8,
  kSettled = 9,
  kCheckInWork = 10,  // random check-ins (sim/checkin/mpi_checkin.h): 0 → rank, a step's clients and model
  kCheckInUpdates = 11,  // rank → 0: those clients' updates before noise
  kIdle = 12,
};

// Which worker rank r ∈ [1, ranks) hosts each client (docs/mpi.md, "Placement"). Every rank computes the
// same placement from the same public inputs: the scheme and each client's planned work.
struct Placement {
  int ranks = 2;                 // P (rank 0 is the server)
  int64_t clients = 0;           // n
  MpiPlacement scheme = MpiPlacement::kBlock;
  std::vector<int> rank_of;      // [c]: the rank hosting client c

  // `work[c]`: client c's planned gradients Σ s_i (kBalanced; ignored otherwise). ranks >= 2.
  static Placement Make(int ranks, int64_t clients, MpiPlacement scheme, const std::vector<int64_t>& work = {});
  int RankOf(int64_t client) const { return rank_of[static_cast<size_t>(client)]; }
  // The clients rank `rank` hosts, increasing.
  std::vector<int64_t> Hosted(int rank) const;
  // "clients 0..99" (a contiguous range), "no client", or "37 clients (round_robin)", for messages.
  std::string Describe(int rank) const;
};

std::string_view ToString(MpiPlacement scheme);

// Bytes of each message kind for a model of `params` floats (docs/mpi.md's traffic model uses these).
constexpr size_t kUpdateHeaderBytes = 3 * sizeof(int64_t) + 2 * sizeof(double);
constexpr size_t kBroadcastHeaderBytes = sizeof(int64_t);
inline size_t UpdateBytes(int64_t params) { return kUpdateHeaderBytes + sizeof(float) * static_cast<size_t>(params); }
inline size_t BroadcastBytes(int64_t params) {
  return kBroadcastHeaderBytes + sizeof(float) * static_cast<size_t>(params);
}

using Buffer = std::vector<std::byte>;

// The wire form of an UpdateMessage: every field travels (a field added to UpdateMessage must be added here:
// the static_assert in mpi_transport.cc and the round-trip test pin the layout).
void EncodeUpdate(const UpdateMessage& message, std::byte* out);  // UpdateBytes(message.update.size()) bytes
// Reads an update of `params` floats into `message` (its buffer resized if needed); false on a size mismatch.
bool DecodeUpdate(const Buffer& bytes, int64_t params, UpdateMessage& message);

// What a worker rank reports at the end: its clients' outcomes and how its compute was spread.
struct RankOutcome {
  std::vector<ClientOutcome> clients;
  double compute_seconds = 0.0;
  int cores = 1;            // threads that could compute at once on this rank's host
  uint64_t host = 0;        // hash of MPI_Get_processor_name: ranks on one host share its cores
};
// Diagnostics (realised batch sizes, clip statistics) travel only when `diagnostics` is on
// (output.diagnostics): otherwise they are sent as zeros and rank 0 learns nothing about them.
Buffer EncodeOutcome(const RankOutcome& outcome, bool diagnostics);
// Throws std::runtime_error on a malformed message (a protocol bug, never user input).
RankOutcome DecodeOutcome(const Buffer& buffer);

// Sleeps between empty polls, never spins: 10 µs after activity, doubling to 100 µs while the rank waits
// for the next message of a busy run (a global round's broadcast, the next update), and 1 ms once it has
// been idle for over 5 ms (a long compute step, the end of a run). A busy rank reacts within ~0.1 ms, an
// idle one costs ~1 000 short wake-ups a second instead of a core.
class IdleBackoff {
 public:
  void Reset() {
    wait_ = kMin;
    idle_ = std::chrono::microseconds{0};
  }
  // The wait to use now.
  std::chrono::microseconds Next() {
    const auto wait = idle_ > kLongIdle ? kMax : wait_;
    wait_ = std::min(wait_ * 2, kBusyMax);
    idle_ += wait;
    return wait;
  }

 private:
  static constexpr std::chrono::microseconds kMin{10};
  static constexpr std::chrono::microseconds kBusyMax{100};
  static constexpr std::chrono::microseconds kMax{1000};
  static constexpr std::chrono::microseconds kLongIdle{5000};
  std::chrono::microseconds wait_ = kMin;
  std::chrono::microseconds idle_{0};
};

// A received message.
struct Incoming {
  int source = 0;
  int tag = 0;
  Buffer* payload = nullptr;  // valid until the next Poll
};

class Endpoint {
 public:
  explicit Endpoint(MPI_Comm comm);
  ~Endpoint();  // cancels nothing: callers Flush() before the endpoint goes (see Flush)
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Starts sending `buffer` (shared by several sends of one broadcast) and keeps it alive until sent; the
  // caller must not modify it until then.
  void Send(int dest, Tag tag, std::shared_ptr<Buffer> buffer);
  void SendEmpty(int dest, Tag tag);
  // Receives one message from `source` (or MPI_ANY_SOURCE) if one has arrived; never blocks.
  bool Poll(int source, Incoming& message);
  // Completes finished sends; returns buffers of kUpdate sends to the caller's pool through `done`.
  void Progress(std::vector<std::shared_ptr<Buffer>>* done = nullptr);
  size_t pending_sends() const { return pending_.size(); }
  // Progresses sends until none is pending or `deadline` passes; false on time-out.
  bool Flush(std::chrono::steady_clock::time_point deadline);
  // Seconds since the last Send/SendEmpty to `dest`.
  double SinceSent(int dest) const;
  // Traffic so far (payload bytes; MPI adds a few dozen bytes of envelope per message).
  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t bytes_received() const { return bytes_received_; }
  int64_t messages_sent() const { return messages_sent_; }
  int64_t messages_received() const { return messages_received_; }

 private:
  // A send in flight: its buffer lives until MPI is done with it. requests_[i] belongs to pending_[i]; the
  // requests are kept contiguous so that one MPI_Testsome (one pass of the progress engine) completes them
  // all — an MPI_Test per request made a rank's loop quadratic when 10^5 updates were in flight.
  struct PendingSend {
    std::shared_ptr<Buffer> buffer;
    Tag tag;
  };
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<PendingSend> pending_;
  std::vector<MPI_Request> requests_;
  std::vector<int> completed_;  // MPI_Testsome's output
  std::vector<std::chrono::steady_clock::time_point> last_sent_;
  Buffer receive_;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
  int64_t messages_sent_ = 0;
  int64_t messages_received_ = 0;
  static const std::shared_ptr<Buffer> kEmpty;
};

// Host name hash of this rank (MPI_Get_processor_name).
uint64_t HostHash();

}  // namespace asyncdp::sim::mpi
