#include "lang/eval_test_util.h"

namespace sx {
namespace {

using namespace eval_test;

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
  EXPECT_EQ(message("(nth [1 2 3] 3)"), "`nth` expected an index from 0 to 2 (the list's length is 3), found 3");
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
  EXPECT_EQ(ev("(range 9223372036854775805 9223372036854775807)"), "(9223372036854775805 9223372036854775806)");
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
  for (const char* walk : {"(reverse xs)", "(filter (fn [x] true) xs)", "(reduce + xs)", "(zip xs xs)", "(append xs 1)",
                           "(cons 1 xs)", "(rest xs)"}) {
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

}  // namespace
}  // namespace sx
