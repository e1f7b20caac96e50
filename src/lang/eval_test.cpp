#include <gtest/gtest.h>

#include "lang/interp.h"
#include "reader/reader.h"
#include "util/big_stack.h"

namespace sx {
namespace {

// Evaluates every form of `text` in `in` (on a big stack, as the CLI does); the last value's repr.
std::string run(Interp& in, std::string_view text) {
  std::string out;
  run_with_big_stack([&] {
    ValueP v = nil();
    for (const auto& form : read_string(text)) v = in.eval(form, in.globals());
    out = repr(*v);
  });
  return out;
}

std::string ev(std::string_view text) {
  Interp in;
  return run(in, text);
}

// The error evaluating `text` raises; a test failure when there is none.
UserError fails(std::string_view text, int64_t limit = 10'000'000) {
  Interp in(limit);
  try {
    run(in, text);
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error evaluating: " << text;
  return UserError(Code::CLI_001, Span{}, "none");
}

Code code(std::string_view text) { return fails(text).code(); }
std::string message(std::string_view text) { return fails(text).diagnostics()[0].message; }

// ---- numbers ----

TEST(Numbers, Arithmetic) {
  EXPECT_EQ(ev("(+)"), "0");
  EXPECT_EQ(ev("(+ 1 2 3)"), "6");
  EXPECT_EQ(ev("(+ 1 2.5)"), "3.5");
  EXPECT_EQ(ev("(- 5)"), "-5");
  EXPECT_EQ(ev("(- 10 1 2)"), "7");
  EXPECT_EQ(ev("(- 1.5)"), "-1.5");
  EXPECT_EQ(ev("(*)"), "1");
  EXPECT_EQ(ev("(* 2 3 4)"), "24");
  EXPECT_EQ(ev("(* 2 0.5)"), "1.0");
  EXPECT_EQ(ev("(/ 1 2)"), "0.5");
  EXPECT_EQ(ev("(/ 6 3)"), "2.0");
  EXPECT_EQ(ev("(/ 4)"), "0.25");
  EXPECT_EQ(ev("(/ 12 2 3)"), "2.0");
  EXPECT_EQ(ev("(quot 7 2)"), "3");
  EXPECT_EQ(ev("(quot -7 2)"), "-3");  // truncating
  EXPECT_EQ(ev("(mod 7 3)"), "1");
  EXPECT_EQ(ev("(mod -7 3)"), "2");  // the divisor's sign, as Python
  EXPECT_EQ(ev("(mod 7 -3)"), "-2");
  EXPECT_EQ(ev("(mod -9223372036854775807 -1)"), "0");
  EXPECT_EQ(ev("(mod 5.5 2)"), "1.5");
  EXPECT_EQ(ev("(mod -1.0 3)"), "2.0");
}

TEST(Numbers, Overflow) {
  EXPECT_EQ(code("(+ 9223372036854775807 1)"), Code::EVAL_006);
  EXPECT_EQ(code("(- -9223372036854775807 2)"), Code::EVAL_006);
  EXPECT_EQ(code("(* 4611686018427387904 2)"), Code::EVAL_006);
  EXPECT_EQ(code("(- (- -9223372036854775807 1))"), Code::EVAL_006);
  EXPECT_EQ(code("(abs (- -9223372036854775807 1))"), Code::EVAL_006);
  EXPECT_EQ(code("(quot (- -9223372036854775807 1) -1)"), Code::EVAL_006);
  EXPECT_EQ(code("(pow 2 63)"), Code::EVAL_006);
  EXPECT_EQ(ev("(pow 2 62)"), "4611686018427387904");
  EXPECT_EQ(ev("(+ 9223372036854775807 1.0)"), "9223372036854775808.0");
  EXPECT_EQ(code("(* 1e300 1e300)"), Code::EVAL_006);  // floats stay finite
  EXPECT_EQ(code("(exp 1000)"), Code::EVAL_006);
  EXPECT_NE(message("(+ 9223372036854775807 1)").find("64-bit"), std::string::npos);
}

TEST(Numbers, DivisionByZero) {
  EXPECT_EQ(code("(/ 1 0)"), Code::EVAL_006);
  EXPECT_EQ(code("(/ 1 0.0)"), Code::EVAL_006);
  EXPECT_EQ(code("(/ 0)"), Code::EVAL_006);
  EXPECT_EQ(code("(quot 1 0)"), Code::EVAL_006);
  EXPECT_EQ(code("(mod 1 0)"), Code::EVAL_006);
  EXPECT_EQ(message("(quot 1 0)"), "`quot` expected a nonzero divisor, found 0");
}

TEST(Numbers, MinMaxAbs) {
  EXPECT_EQ(ev("(min 3 1 2)"), "1");
  EXPECT_EQ(ev("(max 3 1 2)"), "3");
  EXPECT_EQ(ev("(max 1 2.5)"), "2.5");
  EXPECT_EQ(ev("(min 1 2.5)"), "1");  // keeps the winner's type
  EXPECT_EQ(ev("(abs -3)"), "3");
  EXPECT_EQ(ev("(abs -3.5)"), "3.5");
  EXPECT_EQ(code("(min)"), Code::EVAL_003);
}

TEST(Numbers, Rounding) {
  EXPECT_EQ(ev("(floor 2.7)"), "2");
  EXPECT_EQ(ev("(floor -2.1)"), "-3");
  EXPECT_EQ(ev("(ceil 2.1)"), "3");
  EXPECT_EQ(ev("(ceil -2.7)"), "-2");
  EXPECT_EQ(ev("(round 2.5)"), "3");  // half away from zero
  EXPECT_EQ(ev("(round -2.5)"), "-3");
  EXPECT_EQ(ev("(round 2.4)"), "2");
  EXPECT_EQ(ev("(floor 7)"), "7");
  EXPECT_EQ(code("(floor 1e300)"), Code::EVAL_006);
}

TEST(Numbers, Math) {
  EXPECT_EQ(ev("(sqrt 16)"), "4.0");
  EXPECT_EQ(ev("(exp 0)"), "1.0");
  EXPECT_EQ(ev("(log 1)"), "0.0");
  EXPECT_EQ(ev("(pow 2 10)"), "1024");
  EXPECT_EQ(ev("(pow 2 -1)"), "0.5");
  EXPECT_EQ(ev("(pow 4 0.5)"), "2.0");
  EXPECT_EQ(ev("(pow 0 0)"), "1");
  EXPECT_EQ(code("(sqrt -1)"), Code::EVAL_006);
  EXPECT_EQ(code("(log 0)"), Code::EVAL_006);
  EXPECT_EQ(code("(log -1.5)"), Code::EVAL_006);
  EXPECT_EQ(code("(pow 0 -1)"), Code::EVAL_006);
  EXPECT_EQ(code("(pow -8 0.5)"), Code::EVAL_006);
  EXPECT_EQ(message("(sqrt -4)"), "`sqrt` expected a number >= 0, found -4");
}

TEST(Numbers, WrongTypes) {
  EXPECT_EQ(code("(+ 1 \"a\")"), Code::EVAL_004);
  EXPECT_EQ(message("(+ 1 \"a\")"), "`+` expected a number as argument 2, found string");
  EXPECT_EQ(code("(sqrt nil)"), Code::EVAL_004);
  EXPECT_EQ(code("(quot 7.0 2)"), Code::EVAL_004);
  EXPECT_EQ(code("(sqrt 1 2)"), Code::EVAL_003);
  EXPECT_EQ(code("(+ 1 :k 2)"), Code::EVAL_003);
  // Objects go to the tensor hook, which for now refuses them.
  EXPECT_EQ(code("(* 2 +)"), Code::EVAL_004);
  EXPECT_EQ(message("(* 2 +)"), "`*` expected numbers, found builtin");
  // The error sits at the argument.
  UserError e = fails("(+ 1\n   \"a\")");
  EXPECT_EQ(e.diagnostics()[0].span.line, 2u);
  EXPECT_EQ(e.diagnostics()[0].span.col, 4u);
}

TEST(Numbers, Comparison) {
  EXPECT_EQ(ev("(= 1 1)"), "true");
  EXPECT_EQ(ev("(= 1 1.0)"), "true");
  EXPECT_EQ(ev("(= [1 \"a\" [2]] (list 1 \"a\" '(2)))"), "true");
  EXPECT_EQ(ev("(= '(a (b)) '(a (b)))"), "true");
  EXPECT_EQ(ev("(= 1 1 2)"), "false");
  EXPECT_EQ(ev("(= \"a\" 'a)"), "false");
  EXPECT_EQ(ev("(= nil nil)"), "true");
  EXPECT_EQ(ev("(!= 1 2)"), "true");
  EXPECT_EQ(ev("(!= [1] [1])"), "false");
  EXPECT_EQ(ev("(< 1 2 3)"), "true");
  EXPECT_EQ(ev("(< 1 3 2)"), "false");
  EXPECT_EQ(ev("(<= 1 1 2)"), "true");
  EXPECT_EQ(ev("(> 3 2.5 1)"), "true");
  EXPECT_EQ(ev("(>= 3 3 4)"), "false");
  EXPECT_EQ(ev("(< 1)"), "true");
  EXPECT_EQ(ev("(< \"abc\" \"abd\")"), "true");
  EXPECT_EQ(ev("(>= \"b\" \"a\")"), "true");
  EXPECT_EQ(ev("(< 9223372036854775806 9223372036854775807)"), "true");  // exact, not via double
  EXPECT_EQ(code("(< 1 \"a\")"), Code::EVAL_004);
  EXPECT_EQ(message("(< 1 \"a\")"), "`<` expected two numbers or two strings, found integer and string");
  EXPECT_EQ(code("(< 2 1 nil)"), Code::EVAL_004);  // every pair is checked
  EXPECT_EQ(ev("(not nil)"), "true");
  EXPECT_EQ(ev("(not false)"), "true");
  EXPECT_EQ(ev("(not 0)"), "false");
  EXPECT_EQ(code("(not)"), Code::EVAL_003);
}

TEST(Numbers, Conversion) {
  EXPECT_EQ(ev("(int 3.9)"), "3");
  EXPECT_EQ(ev("(int -3.9)"), "-3");
  EXPECT_EQ(ev("(int 5)"), "5");
  EXPECT_EQ(ev("(int \"42\")"), "42");
  EXPECT_EQ(ev("(int \"-7\")"), "-7");
  EXPECT_EQ(code("(int \"4x\")"), Code::EVAL_006);
  EXPECT_EQ(code("(int \"\")"), Code::EVAL_006);
  EXPECT_EQ(code("(int 1e30)"), Code::EVAL_006);
  EXPECT_EQ(code("(int [1])"), Code::EVAL_004);
  EXPECT_EQ(ev("(float 3)"), "3.0");
  EXPECT_EQ(ev("(float \"0.25\")"), "0.25");
  EXPECT_EQ(ev("(float \"3e-3\")"), "0.003");
  EXPECT_EQ(code("(float \"inf\")"), Code::EVAL_006);
  EXPECT_EQ(code("(float \"x\")"), Code::EVAL_006);
  EXPECT_EQ(code("(float true)"), Code::EVAL_004);
}

// ---- lists ----

TEST(Lists, Basics) {
  EXPECT_EQ(ev("(list 1 \"a\" ':k)"), "(1 \"a\" :k)");
  EXPECT_EQ(ev("(list)"), "()");
  EXPECT_EQ(ev("(cons 0 [1 2])"), "(0 1 2)");
  EXPECT_EQ(ev("(cons 0 nil)"), "(0)");
  EXPECT_EQ(ev("(first [1 2])"), "1");
  EXPECT_EQ(ev("(first [])"), "nil");
  EXPECT_EQ(ev("(first nil)"), "nil");
  EXPECT_EQ(ev("(rest [1 2 3])"), "(2 3)");
  EXPECT_EQ(ev("(rest nil)"), "()");
  EXPECT_EQ(ev("(nth [10 20 30] 2)"), "30");
  EXPECT_EQ(ev("(len [1 2 3])"), "3");
  EXPECT_EQ(ev("(len nil)"), "0");
  EXPECT_EQ(ev("(len \"\\u{3bb}ab\")"), "3");
  EXPECT_EQ(ev("(append [1 2] 3 4)"), "(1 2 3 4)");
  EXPECT_EQ(ev("(append nil 1)"), "(1)");
  EXPECT_EQ(ev("(reverse [1 2 3])"), "(3 2 1)");
  EXPECT_EQ(ev("(reverse nil)"), "()");
  EXPECT_EQ(ev("(zip [1 2 3] [:a :b])"), "((1 :a) (2 :b))");
  EXPECT_EQ(ev("(zip [1 2] [3 4] [5 6])"), "((1 3 5) (2 4 6))");
}

TEST(Lists, Errors) {
  EXPECT_EQ(code("(nth [1 2 3] 3)"), Code::EVAL_006);
  EXPECT_EQ(message("(nth [1 2 3] 3)"),
            "`nth` expected an index from 0 to 2 (the list's length is 3), found 3");
  EXPECT_EQ(code("(nth [1] -1)"), Code::EVAL_006);
  EXPECT_EQ(code("(nth nil 0)"), Code::EVAL_006);
  EXPECT_EQ(code("(nth [1] 0.0)"), Code::EVAL_004);
  EXPECT_EQ(code("(first 1)"), Code::EVAL_004);
  EXPECT_EQ(message("(first 1)"), "`first` expected a list as argument 1, found integer");
  EXPECT_EQ(code("(cons 1 2)"), Code::EVAL_004);
  EXPECT_EQ(code("(len 3)"), Code::EVAL_004);
  EXPECT_EQ(code("(map 1 [1])"), Code::EVAL_004);
  EXPECT_EQ(message("(map 1 [1])"), "`map` expected a function as argument 1, found integer");
  EXPECT_EQ(code("(map +)"), Code::EVAL_003);
  EXPECT_EQ(code("(zip)"), Code::EVAL_003);
}

// List concat; tensor_builtins.cpp must keep it when it adds the tensor `concat`.
TEST(Lists, Concat) {
  EXPECT_EQ(ev("(concat [1] nil [2 3] [])"), "(1 2 3)");
  EXPECT_EQ(ev("(concat)"), "()");
  EXPECT_EQ(code("(concat [1] 2)"), Code::EVAL_004);
  Interp in;
  run(in, "(def xs (range 100))");
  int64_t before = in.work_done();
  run(in, "(concat xs xs)");
  EXPECT_GE(in.work_done() - before, 200);
}

TEST(Lists, HigherOrder) {
  EXPECT_EQ(ev("(map (fn [x] (* x x)) [1 2 3])"), "(1 4 9)");
  EXPECT_EQ(ev("(map + [1 2 3] [10 20])"), "(11 22)");
  EXPECT_EQ(ev("(map str nil)"), "()");
  EXPECT_EQ(ev("(filter (fn [x] (> x 1)) [1 2 3])"), "(2 3)");
  EXPECT_EQ(ev("(reduce + 0 [1 2 3])"), "6");
  EXPECT_EQ(ev("(reduce + [1 2 3])"), "6");
  EXPECT_EQ(ev("(reduce + 5 [])"), "5");
  EXPECT_EQ(ev("(reduce + [7])"), "7");
  EXPECT_EQ(ev("(reduce (fn [acc x] (cons x acc)) nil [1 2 3])"), "(3 2 1)");
  EXPECT_EQ(code("(reduce + [])"), Code::EVAL_006);
  // An error inside the called function keeps its own code.
  EXPECT_EQ(code("(map (fn [x] (/ 1 x)) [1 0])"), Code::EVAL_006);
}

TEST(Lists, Range) {
  EXPECT_EQ(ev("(range 4)"), "(0 1 2 3)");
  EXPECT_EQ(ev("(range 0)"), "()");
  EXPECT_EQ(ev("(range -2)"), "()");
  EXPECT_EQ(ev("(range 2 5)"), "(2 3 4)");
  EXPECT_EQ(ev("(range 0 10 3)"), "(0 3 6 9)");
  EXPECT_EQ(ev("(range 5 0 -2)"), "(5 3 1)");
  EXPECT_EQ(ev("(range 0 5 -1)"), "()");
  EXPECT_EQ(ev("(range 9223372036854775805 9223372036854775807)"),
            "(9223372036854775805 9223372036854775806)");
  EXPECT_EQ(code("(range 0 5 0)"), Code::EVAL_006);
  EXPECT_EQ(code("(range 1.5)"), Code::EVAL_004);
  EXPECT_EQ(code("(range)"), Code::EVAL_003);
  EXPECT_EQ(code("(range 1 2 3 4)"), Code::EVAL_003);
}

// Builtins that walk a collection pay one unit per element.
TEST(Lists, WorkBudget) {
  Interp in;
  run(in, "(def xs (range 100))");
  int64_t before = in.work_done();
  run(in, "(range 1000)");
  EXPECT_GE(in.work_done() - before, 1000);
  before = in.work_done();
  run(in, "(map (fn [x] x) xs)");
  EXPECT_GE(in.work_done() - before, 200);  // per element: map's unit and the body's
  for (const char* walk : {"(reverse xs)", "(filter (fn [x] true) xs)", "(reduce + xs)", "(zip xs xs)",
                           "(append xs 1)", "(cons 1 xs)", "(rest xs)"}) {
    before = in.work_done();
    run(in, walk);
    EXPECT_GE(in.work_done() - before, 99) << walk;
  }
  // A huge range fails on the budget before anything is built.
  EXPECT_EQ(code("(range 9223372036854775807)"), Code::EVAL_041);
  EXPECT_EQ(code("(range -9223372036854775807 9223372036854775807)"), Code::EVAL_041);
  EXPECT_EQ(fails("(len (range 2000))", 1000).code(), Code::EVAL_041);
}

// ---- strings ----

TEST(Strings, StrAndFormat) {
  EXPECT_EQ(ev("(str \"blocks.\" 3)"), "\"blocks.3\"");
  EXPECT_EQ(ev("(str)"), "\"\"");
  EXPECT_EQ(ev("(str 0.5 \" \" 1e-7 \" \" 2.0 ':k 'sym [1 \"x\"])"), "\"0.5 1e-07 2.0:ksym(1 x)\"");
  EXPECT_EQ(ev("(format \"layer {} of {}\" 1 4)"), "\"layer 1 of 4\"");
  EXPECT_EQ(ev("(format \"{{}} {} }}{{\" \"x\")"), "\"{} x }{\"");
  EXPECT_EQ(ev("(format \"plain\")"), "\"plain\"");
  EXPECT_EQ(code("(format \"{} {}\" 1)"), Code::EVAL_003);
  EXPECT_EQ(message("(format \"{} {}\" 1)"),
            "`format` expected 2 arguments after the format string (one per `{}`), found 1");
  EXPECT_EQ(code("(format \"{}\" 1 2)"), Code::EVAL_003);
  EXPECT_EQ(code("(format \"{x}\" 1)"), Code::EVAL_006);
  EXPECT_EQ(code("(format \"}\")"), Code::EVAL_006);
  EXPECT_EQ(code("(format 1)"), Code::EVAL_004);
}

TEST(Strings, SymbolsAndKeywords) {
  EXPECT_EQ(ev("(symbol \"d-model\")"), "d-model");
  EXPECT_EQ(ev("(= (symbol \"x\") 'x)"), "true");
  EXPECT_EQ(ev("(keyword \"steps\")"), ":steps");
  EXPECT_EQ(ev("(keyword \":steps\")"), ":steps");
  EXPECT_EQ(ev("(keyword 'lr)"), ":lr");
  EXPECT_EQ(code("(symbol \"\")"), Code::EVAL_006);
  EXPECT_EQ(code("(symbol 1)"), Code::EVAL_004);
}

TEST(Strings, ErrorAndPrint) {
  UserError e = fails("(defn check [x] (error \"bad value: \" x \" here\"))\n(check 3)");
  EXPECT_EQ(e.code(), Code::EVAL_008);
  EXPECT_EQ(e.diagnostics()[0].message, "bad value: 3 here");
  EXPECT_EQ(e.diagnostics()[0].span.line, 1u);
  std::string text = render(e.diagnostics()[0]);
  EXPECT_NE(text.find("in: check"), std::string::npos) << text;
  EXPECT_EQ(code("(error)"), Code::EVAL_003);

  testing::internal::CaptureStderr();
  EXPECT_EQ(ev("(print \"lr\" 0.5 [1 \"a\"])"), "nil");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "print: lr 0.5 (1 a)\n");
}

// ---- special forms ----

TEST(Special, DefAndFunctions) {
  EXPECT_EQ(ev("(def x 3) (+ x 1)"), "4");
  EXPECT_EQ(ev("(defn sq [x] (* x x)) (sq 5)"), "25");
  EXPECT_EQ(ev("(defn f \"doc\" [x] x) (f 1)"), "1");
  EXPECT_EQ(ev("(def f (fn [x] x)) f"), "#<function f>");
  EXPECT_EQ(ev("(defn fact [n] (if (<= n 1) 1 (* n (fact (- n 1))))) (fact 20)"), "2432902008176640000");
  EXPECT_EQ(ev("(defn sum [& xs] (reduce + 0 xs)) [(sum) (sum 1 2 3)]"), "(0 6)");
  EXPECT_EQ(ev("(defn f [a & more] [a more]) (f 1 2 3)"), "(1 (2 3))");
  EXPECT_EQ(code("(def 1 2)"), Code::EVAL_005);
  EXPECT_EQ(code("(defn f (x) x)"), Code::EVAL_005);
  EXPECT_EQ(code("undefined-name"), Code::EVAL_001);
  EXPECT_EQ(code("(1 2)"), Code::EVAL_002);
}

TEST(Special, KeywordParameters) {
  const char* block = "(defn block [x :heads 4 :dropout 0.0] [x heads dropout])\n";
  EXPECT_EQ(ev(std::string(block) + "(block 1)"), "(1 4 0.0)");
  EXPECT_EQ(ev(std::string(block) + "(block 1 :heads 8)"), "(1 8 0.0)");
  EXPECT_EQ(ev(std::string(block) + "(block 1 :dropout 0.1 :heads 2)"), "(1 2 0.1)");
  // Defaults are evaluated at call time and see earlier parameters.
  EXPECT_EQ(ev("(defn f [d :hidden (* 4 d)] hidden) (f 8)"), "32");

  UserError e = fails(std::string(block) + "(block 1 :head 8)");
  EXPECT_EQ(e.code(), Code::EVAL_003);
  const Diagnostic& d = e.diagnostics()[0];
  EXPECT_NE(d.message.find(":heads"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find(":dropout"), std::string::npos) << d.message;
  EXPECT_EQ(d.help, "did you mean `:heads`?");
  EXPECT_EQ(d.span.line, 2u);

  e = fails(std::string(block) + "(block :heads 8)");
  EXPECT_EQ(e.code(), Code::EVAL_003);
  EXPECT_NE(e.diagnostics()[0].message.find("`x`"), std::string::npos) << e.diagnostics()[0].message;
  EXPECT_EQ(code(std::string(block) + "(block 1 2)"), Code::EVAL_003);
  EXPECT_EQ(code(std::string(block) + "(block 1 :heads)"), Code::EVAL_003);
}

TEST(Special, ClosuresLetSet) {
  EXPECT_EQ(ev("(defn adder [n] (fn [x] (+ x n))) (def add2 (adder 2)) (add2 5)"), "7");
  EXPECT_EQ(ev("(defn counter [] (let [n 0] (fn [] (set! n (+ n 1)))))"
               "(def c (counter)) (c) (c) (c)"),
            "3");
  EXPECT_EQ(ev("(let [a 1 b (+ a 1)] (* a b 10))"), "20");
  EXPECT_EQ(ev("(def a 1) (let [a 2] a)"), "2");
  EXPECT_EQ(ev("(def a 1) (let [a 2] a) a"), "1");
  EXPECT_EQ(ev("(def x 1) (set! x 5) x"), "5");
  EXPECT_EQ(code("(set! nope 1)"), Code::EVAL_001);
  EXPECT_EQ(code("(let [a] a)"), Code::EVAL_005);
  EXPECT_EQ(code("(let [a 1] b)"), Code::EVAL_001);
}

TEST(Special, Conditionals) {
  EXPECT_EQ(ev("(if true 1 2)"), "1");
  EXPECT_EQ(ev("(if nil 1 2)"), "2");
  EXPECT_EQ(ev("(if false 1)"), "nil");
  EXPECT_EQ(ev("(if 0 1 2)"), "1");  // only nil and false are false
  EXPECT_EQ(ev("(when true 1 2)"), "2");
  EXPECT_EQ(ev("(when false 1 2)"), "nil");
  EXPECT_EQ(ev("(def n 5) (cond (< n 0) :neg (= n 0) :zero :else :pos)"), ":pos");
  EXPECT_EQ(ev("(cond false 1)"), "nil");
  EXPECT_EQ(ev("(and)"), "true");
  EXPECT_EQ(ev("(and 1 2)"), "2");
  EXPECT_EQ(ev("(and 1 nil (error \"not evaluated\"))"), "nil");
  EXPECT_EQ(ev("(or)"), "nil");
  EXPECT_EQ(ev("(or false 3 (error \"not evaluated\"))"), "3");
  EXPECT_EQ(ev("(do 1 2 3)"), "3");
  EXPECT_EQ(ev("(do)"), "nil");
  EXPECT_EQ(code("(if)"), Code::EVAL_005);
  EXPECT_EQ(code("(cond 1)"), Code::EVAL_005);
}

TEST(Special, For) {
  EXPECT_EQ(ev("(for [i (range 3)] (* i 10))"), "(0 10 20)");
  EXPECT_EQ(ev("(for [s [\"a\" \"b\"]] (str \"blocks.\" s))"), "(\"blocks.a\" \"blocks.b\")");
  EXPECT_EQ(ev("(for [i nil] i)"), "()");
  EXPECT_EQ(ev("(for [i [1 2]] (def last-seen i) (* i 2))"), "(2 4)");
  EXPECT_EQ(code("(for [i 3] i)"), Code::EVAL_004);
  EXPECT_EQ(code("(for i (range 3))"), Code::EVAL_005);
}

TEST(Special, Quoting) {
  EXPECT_EQ(ev("'x"), "x");
  EXPECT_EQ(ev("'(a b (c))"), "(a b (c))");
  EXPECT_EQ(ev("(quote (+ 1 2))"), "(+ 1 2)");
  EXPECT_EQ(ev("(def x 5) `(a ,x c)"), "(a 5 c)");
  EXPECT_EQ(ev("(def xs [1 2]) `(a ,@xs c)"), "(a 1 2 c)");
  EXPECT_EQ(ev("`(a ,@nil b)"), "(a b)");
  EXPECT_EQ(ev("(def x 5) `(a (b ,(+ x 1)))"), "(a (b 6))");
  EXPECT_EQ(ev("(def x 5) `[x ,x]"), "[x 5]");
  // Nested quasiquote: only the outermost level's unquotes are evaluated.
  EXPECT_EQ(ev("(def x 5) `(a `(b ,x))"), "(a (quasiquote (b (unquote x))))");
  EXPECT_EQ(ev("(def x 5) `(a `(b ,(c ,x)))"), "(a (quasiquote (b (unquote (c 5)))))");
  EXPECT_EQ(code(",x"), Code::EVAL_009);
  EXPECT_EQ(code("(def x 1) `(a ,@x)"), Code::EVAL_009);
}

TEST(Special, Macros) {
  EXPECT_EQ(ev("(defmacro unless [c & body] `(if ,c nil (do ,@body))) (unless false 1 2)"), "2");
  EXPECT_EQ(ev("(defmacro unless [c & body] `(if ,c nil (do ,@body))) (unless true (error \"no\"))"), "nil");
  // A macro receives code, not values, and builds code that is then evaluated.
  EXPECT_EQ(
      ev("(defmacro swap-args [call] (list (first call) (nth call 2) (nth call 1))) (swap-args (- 10 1))"),
      "-9");
  EXPECT_EQ(ev("(defmacro defconst [name v] `(def ,name ,v)) (defconst k 42) k"), "42");
  EXPECT_EQ(ev("(defmacro twice [x] `(do ,x ,x)) (def n 0) (twice (set! n (+ n 1))) n"), "2");
}

TEST(Special, Recursion) {
  EXPECT_EQ(ev("(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (fib 15)"), "610");
  EXPECT_EQ(ev("(defn count-down [n] (if (= n 0) :done (count-down (- n 1)))) (count-down 5000)"), ":done");
  UserError e = fails("(defn forever [n] (forever (+ n 1)))\n(forever 0)");
  EXPECT_EQ(e.code(), Code::EVAL_042);
  std::string text = render(e.diagnostics()[0]);
  EXPECT_NE(text.find("in: forever"), std::string::npos) << text;
  // Deeply nested data and expressions are bounded too.
  std::string deep;
  for (int k = 0; k < 9000; ++k) deep += "(+ 1 ";
  deep += "0" + std::string(9000, ')');
  EXPECT_EQ(ev(deep), "9000");
}

TEST(Special, WorkBudget) {
  UserError e = fails(
      "(defn spin [n] (if (= n 0) 0 (spin (- n 1))))\n"
      "(defn outer [] (spin 100000))\n"
      "(outer)",
      1000);
  EXPECT_EQ(e.code(), Code::EVAL_041);
  const Diagnostic& d = e.diagnostics()[0];
  EXPECT_EQ(d.message, "the compile-time work budget of 1000 was exceeded");
  std::string text = render(d);
  EXPECT_NE(text.find("error[E-EVAL-041]: the compile-time work budget of 1000 was exceeded"),
            std::string::npos);
  EXPECT_NE(text.find("= in: spin (<string>:1:1) <- spin"), std::string::npos) << text;
  EXPECT_NE(text.find("more"), std::string::npos) << text;  // only the innermost calls are listed
  EXPECT_NE(text.find("= help: raise SEXPGPU_EVAL_LIMIT"), std::string::npos) << text;
  // The chain names the innermost calls with where each function was defined.
  e = fails("(defn body [i] (reduce + (range 50)))\n(defn build [] (map body (range 600)))\n(build)", 1000);
  EXPECT_EQ(e.code(), Code::EVAL_041);
  text = render(e.diagnostics()[0]);
  EXPECT_NE(text.find("= in: body (<string>:1:1) <- build (<string>:2:1)\n"), std::string::npos) << text;
  // Within the budget the same program runs.
  Interp in(1000);
  EXPECT_EQ(run(in, "(defn spin [n] (if (= n 0) 0 (spin (- n 1)))) (spin 10)"), "0");
  EXPECT_GT(in.work_done(), 50);
  EXPECT_LE(in.work_done(), 1000);
}

// ---- bugs in interp.cpp / special_forms.cpp: these fail until those files are fixed ----

// special_forms.cpp reads name[8] of "unquote" (past its end) to choose between `,` and `,@`.
TEST(Bugs, UnquoteOutsideQuasiquoteNamesComma) {
  EXPECT_EQ(message("(+ 1 ,x)"), "`,` appeared outside a quasiquote");
  EXPECT_EQ(message("(+ 1 ,@x)"), "`,@` appeared outside a quasiquote");
}

// quasi() lowers the depth for `,` but not for `,@` inside a nested quasiquote, and
// leaves a `,@` with no list around it unevaluated.
TEST(Bugs, NestedQuasiquoteSplice) {
  EXPECT_EQ(ev("(def x 5) `(a `(b ,@(c ,x)))"), "(a (quasiquote (b (unquote-splicing (c 5)))))");
  EXPECT_EQ(code("(def xs [1]) `,@xs"), Code::EVAL_009);
}

// Args::span_of gives the span of the argument's value, which for a name is where the
// value was made (here the "a" of the def), not the argument in the call.
TEST(Bugs, ErrorAtTheArgumentNotTheValue) {
  UserError e = fails("(def s \"a\")\n(+ 1 s)");
  EXPECT_EQ(e.diagnostics()[0].span.line, 2u);
  EXPECT_EQ(e.diagnostics()[0].span.col, 6u);
}

}  // namespace
}  // namespace sx
