// The table of library calls by opcode (see library_calls.h).
#include "jit/calls/library_calls.h"

#include "jit/calls/blas_call.h"
#include "jit/calls/fft_call.h"
#include "jit/calls/linalg_call.h"
#include "jit/calls/rng_call.h"
#include "jit/calls/select_and_scatter_call.h"
#include "jit/calls/sort_call.h"

namespace xjit::jit {
namespace {

struct LibraryCallRow {
  Opcode opcode;
  LibraryCallPlanner plan;
};

// One row per opcode a library runs (runtime/<library>/, glue in
// jit/calls/<call>_call.h).
constexpr LibraryCallRow kLibraryCalls[] = {
    {Opcode::kDot,  // runtime/blas
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanDotCall(i, c.threads, d);
     }},
    {Opcode::kConvolution,  // runtime/blas
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanConvolutionCall(i, c.threads, d);
     }},
    {Opcode::kFft,  // runtime/fft
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanFftCall(i, c.threads, d);
     }},
    {Opcode::kSort,  // runtime/sort, with a compiled comparator
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanSortCall(i, *c.target, c.threads, d);
     }},
    {Opcode::kTopK,  // runtime/sort/topk.h
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanTopKCall(i, c.threads, d);
     }},
    {Opcode::kSelectAndScatter,  // runtime/select_and_scatter, with a compiled selection
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanSelectAndScatterCall(i, *c.target, d);
     }},
    {Opcode::kCholesky,  // runtime/linalg
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanLinalgCall(i, c.threads, d);
     }},
    {Opcode::kTriangularSolve,  // runtime/linalg
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanLinalgCall(i, c.threads, d);
     }},
    {Opcode::kRng,  // runtime/rng, drawing from the run's state
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanRngCall(i, c.threads, d);
     }},
    {Opcode::kRngBitGenerator,  // runtime/rng
     [](const Instruction& i, const LibraryCallContext& c, std::string* d) {
       return PlanRngCall(i, c.threads, d);
     }},
};

}  // namespace

LibraryCallPlanner FindLibraryCallPlanner(Opcode opcode) {
  for (const LibraryCallRow& row : kLibraryCalls) {
    if (row.opcode == opcode) return row.plan;
  }
  return nullptr;
}

}  // namespace xjit::jit
