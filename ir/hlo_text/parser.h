// HLO text parser: reads modules as XLA prints them (see shared/HLO_TEXT.md).
// Errors are "FILE:LINE:COL: error: expected ..., found ...".
// The parser checks syntax and name resolution only; shapes omitted in the
// text are inferred (ir/shape_inference/shape_inference.h), and semantic checks are the
// verifier's (ir/verifier.h).
#ifndef XJIT_IR_HLO_TEXT_PARSER_H_
#define XJIT_IR_HLO_TEXT_PARSER_H_

#include <memory>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit {

// `filename` only labels error messages.
absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(absl::string_view text,
                                                        absl::string_view filename = "<text>");
// A shape alone: "f32[2,3]{0,1}", "(s32[], token[])".
absl::StatusOr<Shape> ParseShape(absl::string_view text);
// A literal with its shape, as in `literal=`: "f32[2]{0} {1, 2}".
absl::StatusOr<Literal> ParseLiteral(absl::string_view text);

}  // namespace xjit

#endif  // XJIT_IR_HLO_TEXT_PARSER_H_
