// A literal's text written piece by piece: exactly the text of
// Literal::ToString(), ToString(declared) and ValueToString(), handed to a
// sink in order instead of returned as one string, so that a caller can write
// a large value out holding no more of its text than one element's (`xjit
// run` prints results to stdout this way; a result's text is several times
// its size in memory). The Literal methods build their strings with these.
#ifndef XJIT_IR_LITERAL_TEXT_H_
#define XJIT_IR_LITERAL_TEXT_H_

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace xjit {

// Receives consecutive pieces of the text.
using TextSink = absl::FunctionRef<void(absl::string_view)>;

// literal.ValueToString(), piece by piece.
void PrintLiteralValue(const Literal& literal, TextSink sink);
// literal.ToString(), piece by piece.
void PrintLiteral(const Literal& literal, TextSink sink);
// literal.ToString(declared), piece by piece.
void PrintLiteral(const Literal& literal, const Shape& declared, TextSink sink);

}  // namespace xjit

#endif  // XJIT_IR_LITERAL_TEXT_H_
