#include "xla_plugin/devices/sim/compiler/buffer_planner.h"

#include <algorithm>
#include <numeric>

namespace pjrtkit {
namespace sim {
namespace {

constexpr int64_t kAlignment = 64;

int64_t Align(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The slot whose bytes `s` shares, following aliases to the end.
Slot RootOf(const std::vector<Slot>& alias_of, Slot s) {
  while (alias_of[s] >= 0) s = alias_of[s];
  return s;
}

}  // namespace

Status PlanBuffers(const std::vector<Slot>& alias_of, Computation* computation) {
  const size_t num_slots = computation->slot_types.size();
  if (alias_of.size() != num_slots) return Internal("buffer planner: alias table size");
  std::vector<SlotPlace> places(num_slots);
  std::vector<bool> placed(num_slots, false);
  for (size_t p = 0; p < computation->parameters.size(); ++p) {
    const Slot s = computation->parameters[p];
    places[s] = {SlotPlace::Kind::kParameter, static_cast<int64_t>(p)};
    placed[s] = true;
  }
  for (Slot s = 0; s < static_cast<Slot>(num_slots); ++s) {
    if (alias_of[s] >= 0) {
      places[s] = {SlotPlace::Kind::kAlias, alias_of[s]};
      placed[s] = true;
    }
  }
  // A result is computed straight into the caller's buffer unless its slot is placed already
  // (a parameter, an alias, an earlier result): then it is copied at the end.
  for (size_t j = 0; j < computation->results.size(); ++j) {
    const Slot s = computation->results[j];
    if (placed[s]) continue;
    places[s] = {SlotPlace::Kind::kResult, static_cast<int64_t>(j)};
    placed[s] = true;
  }
  // Lifetimes of the arena slots, in instruction indices (inclusive). A use through an alias is a
  // use of its root; a result copied at the end lives to the end.
  const int64_t end = static_cast<int64_t>(computation->instructions.size());
  std::vector<int64_t> first(num_slots, end), last(num_slots, -1);
  for (int64_t i = 0; i < end; ++i) {
    const Instruction& instruction = computation->instructions[i];
    for (Slot s : instruction.results) {
      const Slot root = RootOf(alias_of, s);
      first[root] = std::min(first[root], i);
      last[root] = std::max(last[root], i);
    }
    for (Slot s : instruction.operands) {
      const Slot root = RootOf(alias_of, s);
      first[root] = std::min(first[root], i);
      last[root] = std::max(last[root], i);
    }
  }
  for (Slot s : computation->results) {
    const Slot root = RootOf(alias_of, s);
    last[root] = end;
    first[root] = std::min(first[root], end);
  }
  std::vector<Slot> arena;
  for (Slot s = 0; s < static_cast<Slot>(num_slots); ++s) {
    if (!placed[s]) arena.push_back(s);
  }
  // Largest first, each at the lowest offset clear of every placed slot alive at the same time.
  std::stable_sort(arena.begin(), arena.end(), [&](Slot a, Slot b) {
    return computation->slot_types[a].byte_size() > computation->slot_types[b].byte_size();
  });
  struct Block {
    int64_t offset, size, first, last;
  };
  std::vector<Block> blocks;
  int64_t arena_bytes = 0;
  for (Slot s : arena) {
    const int64_t size = Align(std::max<int64_t>(computation->slot_types[s].byte_size(), 1));
    const int64_t from = first[s] > last[s] ? last[s] : first[s];
    const int64_t to = last[s] < 0 ? from : last[s];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Block& b : blocks) {
      if (b.first <= to && from <= b.last) busy.push_back({b.offset, b.offset + b.size});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + size <= lo) break;
      offset = std::max(offset, hi);
    }
    blocks.push_back({offset, size, from, to});
    places[s] = {SlotPlace::Kind::kArena, offset};
    arena_bytes = std::max(arena_bytes, offset + size);
  }
  computation->places = std::move(places);
  computation->arena_bytes = arena_bytes;
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
