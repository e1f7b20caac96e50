#include "lang/eval_test_util.h"

namespace sx {
namespace {

using namespace eval_test;

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
  EXPECT_EQ(ev("(defmacro swap-args [call] (list (first call) (nth call 2) (nth call 1))) (swap-args (- 10 1))"), "-9");
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
  EXPECT_NE(text.find("error[E-EVAL-041]: the compile-time work budget of 1000 was exceeded"), std::string::npos);
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
