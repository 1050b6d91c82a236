#include "sim/runtime/mpi_transport.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "core/check.h"

namespace asyncdp::sim::mpi {
namespace {

void Check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("MPI: ") + what + " failed: " + std::string(text, static_cast<size_t>(length)));
}

class WordWriter {
 public:
  void Put(int64_t word) { words_.push_back(word); }
  void PutDouble(double value) { words_.push_back(std::bit_cast<int64_t>(value)); }
  Buffer Finish() const {
    Buffer buffer(words_.size() * sizeof(int64_t));
    std::memcpy(buffer.data(), words_.data(), buffer.size());
    return buffer;
  }

 private:
  std::vector<int64_t> words_;
};

class WordReader {
 public:
  explicit WordReader(const Buffer& buffer) : words_(buffer.size() / sizeof(int64_t)) {
    if (buffer.size() % sizeof(int64_t) != 0) throw std::runtime_error("MPI runtime: outcome message truncated");
    std::memcpy(words_.data(), buffer.data(), buffer.size());
  }
  int64_t Get() {
    if (next_ >= words_.size()) throw std::runtime_error("MPI runtime: outcome message truncated");
    return words_[next_++];
  }
  double GetDouble() { return std::bit_cast<double>(Get()); }
  bool done() const { return next_ == words_.size(); }

 private:
  std::vector<int64_t> words_;
  size_t next_ = 0;
};

// A proactive client's phase record (absent otherwise). The checks' accuracies travel because the phase
// report labels each end "target_reached" / "target_missed" by them; they are the checks' outputs (private by
// default), and the outputs show the values only with output.diagnostics, as on the other runtimes.
void PutTracker(WordWriter& w, const std::optional<TargetTracker>& tracker) {
  w.Put(tracker ? 1 : 0);
  if (!tracker) return;
  w.PutDouble(tracker->target());
  w.Put(tracker->phase());
  w.Put(tracker->paused_checks());
  w.Put(tracker->phases());
  for (const int64_t end : tracker->phase_ends()) w.Put(end);
  w.Put(static_cast<int64_t>(tracker->events().size()));
  for (const TargetEvent& ev : tracker->events()) {
    w.Put(static_cast<int64_t>(ev.kind));
    w.Put(ev.phase);
    w.Put(ev.local_round);
    w.Put(ev.global_round);
    w.PutDouble(ev.accuracy);
  }
}

// `bytes`: the message's size, a bound on every count in it.
std::optional<TargetTracker> GetTracker(WordReader& r, size_t bytes) {
  if (r.Get() == 0) return std::nullopt;
  const auto bound = static_cast<int64_t>(bytes);
  const double target = r.GetDouble();
  const int64_t phase = r.Get();
  const int64_t paused_checks = r.Get();
  const int64_t phases = r.Get();
  if (phases < 1 || phases > bound || phase < 0 || phase > phases || paused_checks < 0) {
    throw std::runtime_error("MPI runtime: bad phase record in outcome");
  }
  std::vector<int64_t> ends(static_cast<size_t>(phases));
  for (int64_t& end : ends) end = r.Get();
  const int64_t count = r.Get();
  if (count < 0 || count > bound) throw std::runtime_error("MPI runtime: bad phase events in outcome");
  std::vector<TargetEvent> events(static_cast<size_t>(count));
  for (TargetEvent& ev : events) {
    const int64_t kind = r.Get();
    if (kind < 0 || kind > static_cast<int64_t>(TargetEventKind::kStop)) {
      throw std::runtime_error("MPI runtime: bad phase event kind in outcome");
    }
    ev.kind = static_cast<TargetEventKind>(kind);
    ev.phase = r.Get();
    ev.local_round = r.Get();
    ev.global_round = r.Get();
    ev.accuracy = r.GetDouble();
  }
  return TargetTracker::Restore(target, std::move(ends), phase, paused_checks, std::move(events));
}

}  // namespace

std::string_view ToString(MpiPlacement scheme) {
  switch (scheme) {
    case MpiPlacement::kBlock: return "block";
    case MpiPlacement::kRoundRobin: return "round_robin";
    case MpiPlacement::kBalanced: return "balanced";
  }
  return "?";
}

Placement Placement::Make(int ranks, int64_t clients, MpiPlacement scheme, const std::vector<int64_t>& work) {
  ASYNCDP_CHECK(ranks >= 2 && clients >= 0);
  Placement p{.ranks = ranks, .clients = clients, .scheme = scheme, .rank_of = {}};
  p.rank_of.assign(static_cast<size_t>(clients), 1);
  const int64_t workers = ranks - 1;
  switch (scheme) {
    case MpiPlacement::kBlock:
      // Rank r hosts [⌊(r−1)n/W⌋, ⌊rn/W⌋).
      for (int rank = 1; rank < ranks; ++rank) {
        const int64_t first = static_cast<int64_t>(rank - 1) * clients / workers;
        const int64_t end = static_cast<int64_t>(rank) * clients / workers;
        for (int64_t c = first; c < end; ++c) p.rank_of[static_cast<size_t>(c)] = rank;
      }
      break;
    case MpiPlacement::kRoundRobin:
      for (int64_t c = 0; c < clients; ++c) p.rank_of[static_cast<size_t>(c)] = 1 + static_cast<int>(c % workers);
      break;
    case MpiPlacement::kBalanced: {
      // Longest processing time first (Graham 1969): within 4/3 of the best makespan. Ties by client id and
      // the lowest rank, so every rank computes the same placement.
      ASYNCDP_CHECK(static_cast<int64_t>(work.size()) == clients);
      std::vector<int64_t> order(static_cast<size_t>(clients));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return work[static_cast<size_t>(a)] > work[static_cast<size_t>(b)];
      });
      using Load = std::pair<int64_t, int>;  // (planned work so far, rank): the smallest on top
      std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
      for (int rank = 1; rank < ranks; ++rank) loads.push({0, rank});
      for (const int64_t c : order) {
        auto [load, rank] = loads.top();
        loads.pop();
        p.rank_of[static_cast<size_t>(c)] = rank;
        loads.push({load + work[static_cast<size_t>(c)], rank});
      }
      break;
    }
  }
  return p;
}

std::vector<int64_t> Placement::Hosted(int rank) const {
  std::vector<int64_t> hosted;
  for (int64_t c = 0; c < clients; ++c) {
    if (rank_of[static_cast<size_t>(c)] == rank) hosted.push_back(c);
  }
  return hosted;
}

std::string Placement::Describe(int rank) const {
  const std::vector<int64_t> hosted = Hosted(rank);
  if (hosted.empty()) return "no client";
  if (hosted.back() - hosted.front() + 1 == static_cast<int64_t>(hosted.size())) {
    return "clients " + std::to_string(hosted.front()) + ".." + std::to_string(hosted.back());
  }
  return std::to_string(hosted.size()) + " clients (" + std::string(ToString(scheme)) + ")";
}

// Fields of UpdateMessage: client, local_round, computed_at, step_size, clip, update. Adding one changes the
// size and stops the build here until the wire format carries it too.
static_assert(sizeof(UpdateMessage) == 3 * sizeof(int64_t) + 2 * sizeof(double) + sizeof(Eigen::VectorXf),
              "UpdateMessage changed: carry the new field in EncodeUpdate/DecodeUpdate");

void EncodeUpdate(const UpdateMessage& message, std::byte* out) {
  std::memcpy(out, &message.client, sizeof(int64_t));
  std::memcpy(out + sizeof(int64_t), &message.local_round, sizeof(int64_t));
  std::memcpy(out + 2 * sizeof(int64_t), &message.computed_at, sizeof(int64_t));
  std::memcpy(out + 3 * sizeof(int64_t), &message.step_size, sizeof(double));
  std::memcpy(out + 3 * sizeof(int64_t) + sizeof(double), &message.clip, sizeof(double));
  std::memcpy(out + kUpdateHeaderBytes, message.update.data(), sizeof(float) * static_cast<size_t>(message.update.size()));
}

bool DecodeUpdate(const Buffer& bytes, int64_t params, UpdateMessage& message) {
  if (bytes.size() != UpdateBytes(params)) return false;
  std::memcpy(&message.client, bytes.data(), sizeof(int64_t));
  std::memcpy(&message.local_round, bytes.data() + sizeof(int64_t), sizeof(int64_t));
  std::memcpy(&message.computed_at, bytes.data() + 2 * sizeof(int64_t), sizeof(int64_t));
  std::memcpy(&message.step_size, bytes.data() + 3 * sizeof(int64_t), sizeof(double));
  std::memcpy(&message.clip, bytes.data() + 3 * sizeof(int64_t) + sizeof(double), sizeof(double));
  if (message.update.size() != params) message.update.resize(params);
  std::memcpy(message.update.data(), bytes.data() + kUpdateHeaderBytes, sizeof(float) * static_cast<size_t>(params));
  return true;
}

Buffer EncodeOutcome(const RankOutcome& outcome, bool diagnostics) {
  WordWriter w;
  w.PutDouble(outcome.compute_seconds);
  w.Put(outcome.cores);
  w.Put(std::bit_cast<int64_t>(outcome.host));
  w.Put(static_cast<int64_t>(outcome.clients.size()));
  for (const ClientOutcome& c : outcome.clients) {
    w.Put(c.id);
    w.Put(c.records);
    w.Put(c.rounds);
    w.Put(c.planned_gradients);
    w.Put(static_cast<int64_t>(c.stop));
    w.Put(c.max_staleness);
    w.Put(diagnostics ? c.gradients : 0);
    w.Put(diagnostics ? c.clip_totals.examples : 0);
    w.Put(diagnostics ? c.clip_totals.clipped : 0);
    w.PutDouble(diagnostics ? c.clip_totals.norm_sum : 0.0);
    w.Put(static_cast<int64_t>(c.staleness_histogram.size()));
    for (int64_t count : c.staleness_histogram) w.Put(count);
    w.Put(c.paused ? 1 : 0);
    PutTracker(w, c.tracker);
  }
  return w.Finish();
}

RankOutcome DecodeOutcome(const Buffer& buffer) {
  WordReader r(buffer);
  RankOutcome outcome;
  outcome.compute_seconds = r.GetDouble();
  outcome.cores = static_cast<int>(r.Get());
  outcome.host = std::bit_cast<uint64_t>(r.Get());
  const int64_t count = r.Get();
  if (count < 0 || count > static_cast<int64_t>(buffer.size())) throw std::runtime_error("MPI runtime: bad outcome");
  outcome.clients.resize(static_cast<size_t>(count));
  for (ClientOutcome& c : outcome.clients) {
    c.id = r.Get();
    c.records = r.Get();
    c.rounds = r.Get();
    c.planned_gradients = r.Get();
    const int64_t stop = r.Get();
    if (stop < 0 || stop > static_cast<int64_t>(ClientStop::kNotAdmitted)) {
      throw std::runtime_error("MPI runtime: bad client stop reason in outcome");
    }
    c.stop = static_cast<ClientStop>(stop);
    c.max_staleness = r.Get();
    c.gradients = r.Get();
    c.clip_totals.examples = r.Get();
    c.clip_totals.clipped = r.Get();
    c.clip_totals.norm_sum = r.GetDouble();
    const int64_t buckets = r.Get();
    if (buckets < 0 || buckets > static_cast<int64_t>(buffer.size())) {
      throw std::runtime_error("MPI runtime: bad staleness histogram in outcome");
    }
    c.staleness_histogram.resize(static_cast<size_t>(buckets));
    for (int64_t& n : c.staleness_histogram) n = r.Get();
    c.paused = r.Get() != 0;
    c.tracker = GetTracker(r, buffer.size());
  }
  if (!r.done()) throw std::runtime_error("MPI runtime: trailing bytes in outcome");
  return outcome;
}

const std::shared_ptr<Buffer> Endpoint::kEmpty = std::make_shared<Buffer>(1);

Endpoint::Endpoint(MPI_Comm comm) : comm_(comm) {
  Check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  Check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  last_sent_.assign(static_cast<size_t>(size_), std::chrono::steady_clock::now());
}

Endpoint::~Endpoint() = default;

void Endpoint::Send(int dest, Tag tag, std::shared_ptr<Buffer> buffer) {
  MPI_Request request = MPI_REQUEST_NULL;
  Check(MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_BYTE, dest, tag, comm_, &request),
        "MPI_Isend");
  bytes_sent_ += static_cast<int64_t>(buffer->size());
  ++messages_sent_;
  pending_.push_back(PendingSend{std::move(buffer), tag});
  requests_.push_back(request);
  last_sent_[static_cast<size_t>(dest)] = std::chrono::steady_clock::now();
}

void Endpoint::SendEmpty(int dest, Tag tag) {
  MPI_Request request = MPI_REQUEST_NULL;
  Check(MPI_Isend(kEmpty->data(), 0, MPI_BYTE, dest, tag, comm_, &request), "MPI_Isend");
  ++messages_sent_;
  pending_.push_back(PendingSend{kEmpty, tag});
  requests_.push_back(request);
  last_sent_[static_cast<size_t>(dest)] = std::chrono::steady_clock::now();
}

bool Endpoint::Poll(int source, Incoming& message) {
  int flag = 0;
  MPI_Message handle = MPI_MESSAGE_NULL;
  MPI_Status status;
  Check(MPI_Improbe(source, MPI_ANY_TAG, comm_, &flag, &handle, &status), "MPI_Improbe");
  if (!flag) return false;
  int bytes = 0;
  Check(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
  receive_.resize(static_cast<size_t>(bytes));
  Check(MPI_Mrecv(bytes > 0 ? receive_.data() : kEmpty->data(), bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE),
        "MPI_Mrecv");
  message.source = status.MPI_SOURCE;
  message.tag = status.MPI_TAG;
  message.payload = &receive_;
  bytes_received_ += bytes;
  ++messages_received_;
  return true;
}

void Endpoint::Progress(std::vector<std::shared_ptr<Buffer>>* done) {
  if (requests_.empty()) return;
  completed_.resize(requests_.size());
  int count = 0;
  Check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                     MPI_STATUSES_IGNORE),
        "MPI_Testsome");
  if (count <= 0) return;  // none completed (MPI_UNDEFINED: no active request)
  // Completed requests are MPI_REQUEST_NULL now: keep the others, in order.
  size_t kept = 0;
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) {
      if (done && pending_[i].tag == kUpdate) done->push_back(std::move(pending_[i].buffer));
      continue;
    }
    if (kept != i) {
      pending_[kept] = std::move(pending_[i]);
      requests_[kept] = requests_[i];
    }
    ++kept;
  }
  pending_.resize(kept);
  requests_.resize(kept);
}

bool Endpoint::Flush(std::chrono::steady_clock::time_point deadline) {
  IdleBackoff backoff;
  while (true) {
    Progress();
    if (pending_.empty()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(backoff.Next());
  }
}

double Endpoint::SinceSent(int dest) const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - last_sent_[static_cast<size_t>(dest)])
      .count();
}

uint64_t HostHash() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  Check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  return std::hash<std::string_view>{}(std::string_view(name, static_cast<size_t>(length)));
}

}  // namespace asyncdp::sim::mpi
