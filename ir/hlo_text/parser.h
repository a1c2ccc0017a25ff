// HLO text parser: reads modules as XLA prints them (see shared/HLO_TEXT.md).
// Errors are "FILE:LINE:COL: error: expected ..., found ...".
// The parser checks syntax and name resolution only; shapes omitted in the
// text are inferred (ir/shape_inference/shape_inference.h), and semantic checks are the
// verifier's (ir/verifier.h).
#ifndef XJIT_IR_HLO_TEXT_PARSER_H_
#define XJIT_IR_HLO_TEXT_PARSER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit {

// The most bytes the constants of one module (and a literal parsed alone)
// may take together, by default: 1 GiB.
inline constexpr int64_t kDefaultMaxConstantBytes = int64_t{1} << 30;

// Limits on what parsing allocates.
struct ParseOptions {
  // The most bytes the constants of one module may take together (each
  // array at its layout's size, padding and tiles included, or at one
  // element width per element if that is more). A constant written out
  // takes at least a character per element, but one whose values are
  // elided (`{...}`, read as zeros) or given as one scalar is filled in:
  // this bounds what that allocates before anything else is checked. Larger
  // constants need a larger value (at most kMaxArrayBytes, ir/layout_util.h).
  int64_t max_constant_bytes = kDefaultMaxConstantBytes;
};

// `filename` only labels error messages.
absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(absl::string_view text,
                                                        absl::string_view filename = "<text>");
absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(absl::string_view text,
                                                        absl::string_view filename,
                                                        const ParseOptions& options);
// A shape alone: "f32[2,3]{0,1}", "(s32[], token[])".
absl::StatusOr<Shape> ParseShape(absl::string_view text);
// A literal with its shape, as in `literal=`: "f32[2]{0} {1, 2}".
absl::StatusOr<Literal> ParseLiteral(absl::string_view text);

}  // namespace xjit

#endif  // XJIT_IR_HLO_TEXT_PARSER_H_
