//! Differential test against LLVM's FileCheck (llvm-19-tools).
//!
//! Each case runs through `glow_filecheck::check` and through
//! `/usr/lib/llvm-19/bin/FileCheck`; exit codes must agree, and so must the
//! full stderr text for cases whose output glow reproduces byte for byte.
//! The arguments go through glow-filecheck's own command-line parser. A
//! second table runs every case under each of [`MODES`]: `-v`/`-vv` remarks
//! and the input dump in every `-dump-input*` mode, byte for byte.
//! Ignored, with the reason, when LLVM's FileCheck is not installed.

use glow_filecheck::{check, cli};
use std::io::Write;
use std::process::{Command, Stdio};

const LLVM_FILECHECK: &str = "/usr/lib/llvm-19/bin/FileCheck";

/// (check file, input, extra arguments).
const CASES: &[(&str, &str, &[&str])] = &[
    ("CHECK: foo\n", "foo\n", &[]),
    ("CHECK: foo\n", "bar\n", &[]),
    ("CHECK: foo\nCHECK-NEXT: baz\n", "foo\nbar\nbaz\n", &[]),
    ("CHECK: foo\nCHECK-NEXT: bar\n", "foo bar\n", &[]),
    ("CHECK: a\nCHECK-SAME: b\n", "a\nb\n", &[]),
    ("CHECK: a\nCHECK-SAME: b\n", "a b\n", &[]),
    ("CHECK: a\nCHECK-NOT: b\nCHECK: c\n", "a\nb\nc\n", &[]),
    ("CHECK: a\nCHECK-NOT: b\nCHECK: c\n", "a\nc\nb\n", &[]),
    ("CHECK: a\nCHECK-NOT: b\n", "a\nc\nb\n", &[]),
    ("CHECK-NOT: b\n", "a\nc\n", &[]),
    ("CHECK-DAG: b\nCHECK-DAG: a\nCHECK: c\n", "a\nb\nc\n", &[]),
    ("CHECK-DAG: a\nCHECK-DAG: a\n", "a\n", &[]),
    (
        "CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\n",
        "a\nx\nb\n",
        &[],
    ),
    (
        "CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\n",
        "b\nx\na\n",
        &[],
    ),
    (
        "CHECK-LABEL: f1\nCHECK: x\nCHECK-LABEL: f2\nCHECK: y\n",
        "f1\ny\nf2\nx\n",
        &[],
    ),
    (
        "CHECK-LABEL: f1\nCHECK: x\nCHECK-LABEL: f2\nCHECK: y\n",
        "f1\nx\nf2\ny\n",
        &[],
    ),
    ("CHECK-LABEL: f1\nCHECK-LABEL: f3\n", "f1\nf2\n", &[]),
    ("CHECK: a\nCHECK-EMPTY:\nCHECK-NEXT: b\n", "a\n\nb\n", &[]),
    ("CHECK: a\nCHECK-EMPTY:\n", "a\nb\n\n", &[]),
    ("CHECK-COUNT-2: a\nCHECK-NOT: a\n", "a\na\na\n", &[]),
    ("CHECK-COUNT-3: a\n", "a\na\n", &[]),
    ("CHECK-COUNT-0: a\n", "a\n", &[]),
    (
        "CHECK: [[X:b.r]]\nCHECK: qux [[X]]\n",
        "foo\nbar\nqux bat\n",
        &[],
    ),
    ("CHECK: [[X:[a-z]+]] = [[X]]\n", "ab = b = b\n", &[]),
    ("CHECK: [[X:[a-z]+]] = [[X]]\n", "ab = cd\n", &[]),
    ("CHECK: [[Y]]\n", "x\n", &[]),
    ("CHECK: [[9x:a]]\n", "a\n", &[]),
    ("CHECK: [[#N:]]\nCHECK-NEXT: [[#N+1]]\n", "5\n6\n", &[]),
    ("CHECK: [[#N:]]\nCHECK-NEXT: [[#N+1]]\n", "5\n7\n", &[]),
    ("CHECK: [[#X:]] [[#X+1]]\n", "1 2\n", &[]),
    ("CHECK: [[#%x,A:]]\nCHECK: [[#A+1]]\n", "ff\n100\n", &[]),
    ("CHECK: [[@LINE]] [[#@LINE+1]]\n", "1 2\n", &[]),
    ("CHECK: v [[#N:]]\nCHECK: w [[#N*2]]\n", "v 3\nw 6\n", &[]),
    ("CHECK: {{a(}}\n", "a\n", &[]),
    ("CHECK: {{}}\n", "a\n", &[]),
    ("CHECK: {{[[:digit:]]+}} {{[^a]}}\n", "12 b\n", &[]),
    ("CHECK: a{{[^x]}}b\n", "a\nb\n", &[]),
    ("CHECK: {{^}}b\n", "ab\nb\n", &[]),
    ("CHECK:\n", "a\n", &[]),
    ("CHECK-NEXT: a\n", "a\n", &[]),
    ("CHECK-DAG-NOT: a\n", "a\n", &[]),
    ("CHECK_NEXT: a\nCHECK: a\n", "a\n", &[]),
    ("nothing\n", "a\n", &[]),
    ("CHECK: a\n", "", &[]),
    ("CHECK: a\n", "", &["--allow-empty"]),
    ("CHECK-NOT: a\n", "", &["--allow-empty"]),
    ("CHECK: a b\n", "a \t b\n", &[]),
    ("CHECK: a b\n", "a  b\n", &["--strict-whitespace"]),
    ("CHECK: a b\n", "  a b  \n", &["--match-full-lines"]),
    ("CHECK: a\n", "a b\n", &["--match-full-lines"]),
    ("CHECK: HELLO\n", "hello\n", &["--ignore-case"]),
    ("CHECK: a\n", "a\nb\n", &["--implicit-check-not=b"]),
    ("CHECK: a\n", "a\nb\n", &["--implicit-check-not=c"]),
    ("A: x\n", "x\n", &["--check-prefixes=A,B"]),
    (
        "A: x\n",
        "x\n",
        &["--check-prefixes=A,B", "--allow-unused-prefixes"],
    ),
    ("CHECK: [[V]]\n", "hi\n", &["-DV=hi"]),
    ("CHECK: [[V]]\n", "hi\n", &["-DV=ho"]),
    (
        "CHECK-LABEL: f1\nCHECK: [[L:x]]\nCHECK-LABEL: f2\nCHECK: [[L]]\n",
        "f1\nx\nf2\nx\n",
        &["--enable-var-scope"],
    ),
    ("CHECK{LITERAL}: {{a}}\n", "{{a}}\n", &[]),
    ("XCHECK: a\nCHECK: b\n", "b\n", &[]),
    ("COM: CHECK: a\nCHECK: b\n", "b\n", &[]),
    ("CHECK: [[X:a]b]]\n", "a\n", &[]),
    (
        "CHECK: {{(a)(b)(c)(d)}}[[#N:]]{{(e)(f)(g)(h)}}[[X:i]][[X]]\n",
        "abcd5efghii\n",
        &[],
    ),
    (
        "CHECK: {{(a)(b)(c)(d)}}[[#N:]]{{(e)(f)(g)}}[[X:i]][[X]]\n",
        "abcd5efgii\n",
        &[],
    ),
    ("CHECK: [[ X]]\n", "a\n", &[]),
    ("CHECK: [[X-:a]]\n", "a\n", &[]),
    ("CHECK: [[X\n", "a\n", &[]),
    ("CHECK: a\n", "a\n", &["-DX", "-D=2", "-DY"]),
    (
        "CHECK: a\n",
        "a\n",
        &[
            "-D$=1", "-D@=1", "-DX-Y=1", "-D#N=1", "-DN=2", "-D#=1", "-D#M=x",
        ],
    ),
    ("CHECK: [[A]] [[#B+C]] [[D]] [[#max(E,C)]]\n", "x\n", &[]),
    ("CHECK: [[A]] [[#B+C]] [[D]]\n", "x\n", &["-DA=1", "-D#C=2"]),
    ("CHECK: [[#N:]]\nCHECK: [[#N-100]]\n", "5\n", &[]),
    ("CHECK: [[#div(1,0)]]\n", "5\n", &[]),
    ("CHECK: [[#%.3,P:]]\n", "b   1\na2\n", &["-v"]),
    (
        "CHECK: [[#%.3,P:]]\nCHECK: [[#P]]\n",
        "0012\n012\n",
        &["-vv"],
    ),
    (
        "CHECK: [[#%.2X,P:]] [[#%.2d,Q:]] [[#%#.3x,R:]]\n",
        "0A -05 0x00f\n",
        &["-vv", "-dump-input=always"],
    ),
    (
        "CHECK: [[#%.2x,P:]]{{(a)(b)(c)(d)(e)(f)(g)}}[[X:i]][[X]]\n",
        "0fabcdefgii\n",
        &[],
    ),
    ("CHECK: [[#N:]]\nCHECK: [[#N:]] [[#N+1]]\n", "1\n5 2\n", &[]),
    ("CHECK: [[#N:N]] [[#N]]\n", "1 1\n", &[]),
    ("CHECK: [[#N]]\nCHECK: [[#N:]] [[#N]]\n", "1 1\n", &[]),
    ("CHECK{LITERAL}: ab\n", "xab\n", &["--match-full-lines"]),
    (
        "CHECK{LITERAL}: {{a}}|b\n",
        "b2bc \n2bc1cab\n",
        &["--match-full-lines"],
    ),
    (
        "CHECK: [[#%d,K:-1]]\n",
        "2\n211b11 \n",
        &["--match-full-lines"],
    ),
    ("CHECK: [[X:a]] [[X]]\n", "\nccc\n\na2a ca", &[]),
    ("CHECK: [[#]]w!\n", "zzz\nxx[0-9]+w\n", &[]),
    ("CHECK: a-b#c&d~{{x}}\n", "zzz\nqa\\-b\\#c\\&d\\~y\n", &[]),
    (
        "CHECK: {{(a)(b)(c)(d)(e)(f)(g)}}{{q|r}}[[X:i]][[X]]\n",
        "abcdefgqii\n",
        &[],
    ),
    (
        "CHECK: {{(a)(b)(c)(d)(e)(f)(g)}}[[X:i]][[X]]{{q|r}}\n",
        "abcdefgiiq\n",
        &[],
    ),
    ("CHECK: [[#5]] [[@LINE]] [[#2+3]] [[#%x,7]]\n", "a\n", &[]),
    (
        "CHECK: [[X:.*]]\nCHECK: [[X]]z\n",
        "a.b\"c\\d(\u{e9})\n",
        &[],
    ),
    (
        "CHECK: [[X:.*]]\nCHECK: [[X]]z\n",
        "a\u{0}b\tc\n",
        &["--strict-whitespace"],
    ),
    // Values past 64 and 128 bits: LLVM 19's APInt widens instead of overflowing.
    (
        "CHECK: a [[#A:]]\nCHECK: b [[#A+1]] [[#mul(A,A)]]\n",
        "a 340282366920938463463374607431768211456\nb 340282366920938463463374607431768211457 115792089237316195423570985008687907853269984665640564039457584007913129639936\n",
        &[],
    ),
    (
        "CHECK: [[#%d,N:]]\nCHECK: [[#%d,sub(N,0x10000000000000000)]]\n",
        "-9223372036854775809\n-27670116110564327425\n",
        &[],
    ),
    (
        "CHECK: [[#%X,div(0x1FFFFFFFFFFFFFFFFFFFF,-3)]]\n",
        "0\n",
        &[],
    ),
    ("CHECK: [[#%d,div(-7,2)]] [[#div(-7,2)]]\n", "-3 3\n", &[]),
    // Brackets next to variables, as in IR tests.
    ("CHECK: [[R:r[0-9]+]]\nCHECK: [[[R]]] [[[#N:]] x i32]\n", "r1\n[r1] [4 x i32]\n", &[]),
    ("CHECK: [[[#N:]] x i32] [[[#N+1]] x\n", "[4 x i32] [5 x\n", &[]),
    ("CHECK: [[R:a]]\nCHECK: [[[R]]\n", "a\n[b\n", &[]),
    // Numeric expression forms: precision, signs, parentheses, constraints, the bare form.
    ("CHECK: [[#%.8,N:]] [[#%.3x,M:]]\n", "00000012 0ff\n", &[]),
    ("CHECK: [[#%d,S:]] [[#max(S,-17)]] [[#min(S,-17)]]\n", "-20 -17 -20\n", &[]),
    ("CHECK: [[#N:]] [[#(N+1)*2]] [[#N-(2-1)]]\n", "3 8 2\n", &[]),
    ("CHECK: [[#N:]]\nCHECK: [[#M: == N+1]] [[#]]\n", "3\n4 77\n", &[]),
    ("CHECK: [[#N:]]\nCHECK: [[#M: == N+1]]\n", "3\n5\n", &[]),
    ("CHECK: [[#%x,N:]]\nCHECK: [[#%d,N:]]\n", "ff\n3\n", &[]),
    ("CHECK: [[X:a]]\nCHECK: [[#X:]]\n", "a\n3\n", &[]),
    // Repeated options: the last value wins, prefixes and -D accumulate.
    ("A: x\nB: y\n", "x\ny\n", &["--check-prefix=A", "--check-prefix=B"]),
    ("CHECK: [[V]] [[W]]\n", "1 2\n", &["-DV=1", "--DW=2"]),
    ("CHECK: a\n", "A\n", &["--ignore-case", "--ignore-case"]),
    ("CHECK: a\n", "b\n", &["-dump-input=never", "-dump-input=never"]),
    ("CHECK: a b\n", "a  b\n", &["--strict-whitespace", "--strict-whitespace"]),
    // Invalid regexes: regcomp's first error, in its words.
    ("CHECK: {{a**}}\n", "a\n", &[]),
    ("CHECK: [[X:*]]\n", "a\n", &[]),
    ("CHECK: {{a{2,1}}}\n", "a\n", &[]),
    ("CHECK: {{a{1x}}}\n", "a\n", &[]),
    ("CHECK: {{a{1}}}\n", "a\n", &[]),
    ("CHECK: {{(a|)}}\n", "a\n", &[]),
    ("CHECK: {{^*}}\n", "a\n", &[]),
    ("CHECK: {{x{ }}\n", "x{ \n", &[]),
    ("CHECK: [[X:]]a[[X]]\n", "a\n", &[]),
    ("CHECK: [[@LINE ]]\n", "1\n", &[]),
    ("CHECK: a\n", "a\n", &["--comment-prefixes=FOO,BAR,BAR"]),
    ("B-DAG: x\nA: a\n", "a\n", &["--check-prefix=A"]),
];

/// (check file, input, FILECHECK_OPTS, arguments): options from the environment come first and
/// the command line overrides them, as in LLVM's `cl::ParseCommandLineOptions`.
const ENV_CASES: &[(&str, &str, &str, &[&str])] = &[
    ("CHECK: a\n", " a \n", "--match-full-lines", &[]),
    (
        "CHECK: a\n",
        " a \n",
        "--match-full-lines --strict-whitespace",
        &[],
    ),
    ("A: x\n", "x\n", "--check-prefix=A", &[]),
    (
        "A: x\nB: y\n",
        "x\ny\n",
        "--check-prefix=A",
        &["--check-prefix=B"],
    ),
    ("CHECK: [[V]]\n", "2\n", "-DV=1", &["-DV=2"]),
    ("CHECK: a\n", "a\n", "--match-full-line", &[]),
];

/// Cases whose stderr glow does not reproduce exactly (documented differences).
/// Case 41: glow adds a "did you mean" note to LLVM's misspelled-directive error.
const STDERR_DIFFERS: &[usize] = &[41];

/// (check file, input), each run under every one of [`MODES`].
const VERBOSE_CASES: &[(&str, &str)] = &[
    ("CHECK: [[@LINE]] [[#@LINE+1]]\nCHECK: [[@LINE-5]]\n", "1 2\nq\n"),
    ("CHECK: [[X:a+]] [[X]]\nCHECK: [[X]]x\n", "aa a aa aa\naa\n"),
    ("CHECK-COUNT-3: a\nCHECK: b\n", "a\na\na\nb\n"),
    ("CHECK-COUNT-1: a\nCHECK-COUNT-2: b\n", "a\nb\nc\n"),
    ("CHECK-COUNT-3: a\n", "a\na\nb\n"),
    ("CHECK: a\nCHECK-NEXT: b\n", "a\nc\nb\n"),
    ("CHECK-DAG: a\nCHECK-DAG: a\nCHECK-DAG: b\nCHECK: c\n", "a b a\nc\n"),
    ("CHECK-DAG: a\nCHECK-DAG: a\n", "a\n"),
    ("CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\nCHECK: c\n", "a\ny\nb\nc\n"),
    ("CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\n", "b\nx\na\n"),
    ("CHECK-DAG: [[A:a]]\nCHECK-DAG: a\nCHECK-DAG: a\nCHECK-NOT: q\nCHECK: e\n", "a a\nq\ne\n"),
    ("CHECK: [[V]] [[#N]]\nCHECK: [[V]]z\n", "hi 5\nhiz\n"),
    ("CHECK: a\nCHECK-EMPTY:\n", "a\nb\n\n"),
    ("CHECK-NOT: a\n", ""),
    ("CHECK: a\nCHECK-NOT: zz", "a\nb"),
    ("CHECK-NOT: zz\n", "a\nb\n"),
    ("CHECK: [[X:.*]]\nCHECK-NOT: [[X]]\n", "a\"b\\c\na\"b\\c\n"),
    ("CHECK: a b\nCHECK: c\n", " a b \nc d\n"),
    ("CHECK: hello world\n", "hello\nhelo world\n"),
    ("CHECK: a\nCHECK: c\n", "a\nb\nc\nb\n"),
    ("CHECK-LABEL: f1\nCHECK: x\nCHECK-LABEL: f2\nCHECK: y\n", "f1\nx\nf2\ny\n"),
    ("CHECK-LABEL: f1\nCHECK: x\nCHECK-LABEL: f2\nCHECK: y\n", "f1\ny\nf2\nx\n"),
    ("CHECK-LABEL: f1\nCHECK-LABEL: f3\n", "f1\nf2\n"),
    ("CHECK-LABEL: f\nCHECK-NOT: x\nCHECK-LABEL: g\n", "f\nx\ng\n"),
    ("CHECK{LITERAL}: [[x]]\nCHECK-NEXT{LITERAL}: {{y}}\n", "[[x]]\n{{z}}\n"),
    ("CHECK: start\nCHECK: end\n", "start\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n"),
    ("CHECK: start\nCHECK: x\nCHECK: end\n", "start\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nx\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n"),
    ("CHECK: a\nCHECK-NEXT: c\n", "1\n2\n3\n4\n5\n6\n7\n8\na\nb\nc\n1\n2\n3\n4\n5\n6\n7\n8\n9\n"),
    ("CHECK: L1\nCHECK: L20\nCHECK: nope\n", "L1\nL2\nL3\nL4\nL5\nL6\nL7\nL8\nL9\nL10\nL11\nL12\nL13\nL14\nL15\nL16\nL17\nL18\nL19\nL20\nL21\nL22\nL23\nL24\nL25\nL26\nL27\nL28\nL29\nL30\n"),
    ("CHECK: L3\nCHECK: L10\nCHECK-NOT: L\nCHECK: L17\n", "L1\nL2\nL3\nL4\nL5\nL6\nL7\nL8\nL9\nL10\nL11\nL12\nL13\nL14\nL15\nL16\nL17\nL18\nL19\nL20\nL21\nL22\nL23\nL24\nL25\nL26\nL27\nL28\nL29\nL30\n"),
    ("CHECK: [[A:x]] [[B:y]] [[#C:]] [[D:z]]\nCHECK: [[D]] [[B]] [[A]] [[#C*1]]\n", "x y 3 z\nz y x 3\n"),
    ("CHECK: a{{(.|[[:space:]])*}}b\nCHECK: zz\n", "x\na\n1\n2\n3\n4\n5\n6\n7\n8\n9\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"),
    ("CHECK: foo\nCHECK-NEXT: bar\n", "foo\nx\nbar\n"),
    ("CHECK: foo\nCHECK-NEXT: bar\n", "foo bar\n"),
    ("CHECK: a\nCHECK: b\n", "a\nc"),
    ("CHECK: a\nCHECK-NOT: b\nCHECK: c\n", "a\nb\nc\n"),
    ("CHECK: s\nCHECK-NOT: a{{(.|[[:space:]])*}}b\nCHECK: e\n", "s\n1\na\n2\n3\n4\n5\n6\n7\n8\nb\n9\n10\n11\n12\n13\n14\n15\n16\ne\n"),
    ("CHECK: a\nCHECK-SAME: b\n", "a\nb\n"),
    ("CHECK-LABEL: f\nCHECK: [[V:.]]\nCHECK-LABEL: g\nCHECK: [[V]]\n", "f\nq\ng\nq\n"),
    ("CHECK: a b\nCHECK: zz\n", "a\t\tb\tc\n\tx\n"),
    ("CHECK: a\nCHECK-NOT: [[U]] [[#V+W]]\nCHECK: b\n", "a\nb\n"),
    ("CHECK-DAG: [[U]]\nCHECK: b\n", "a\nb\n"),
    ("CHECK: [[X:[a-z]+]] [[#N:]]\nCHECK: [[X]] [[#N+1]]\nCHECK-NOT: [[X]]\n", "ab 5\nab 6\nab\n"),
    ("CHECK: [[X:[a-z]+]] [[#%x,N:]]\nCHECK: [[X]] [[#N+1]]\n", "ab ff\nab 101\n"),
    ("CHECK: x\nCHECK: y\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\nx\n"),
    ("CHECK-LABEL: lab1\n CHECK-NEXT: hello\nCHECK-LABEL: lab2\n CHECK-NEXT: world\n", "foo8\nfoo7\nfoo6\nfoo5\nfoo4\nfoo3\nfoo2\nfoo1\nlab1 hello\nfoo1\nfoo2\nfoo3\nfoo4\nfoo5\nfoo6\nfoo7\nfoo7\nfoo6\nfoo5\nfoo4\nfoo3\nfoo2\nfoo1\nlab2 world\nfoo1\nfoo2\nfoo3\nfoo4\nfoo5\nfoo6\nfoo7\nfoo8\nfoo9\nfoo0\n"),
    ("CHECK-LABEL: lab1\n      CHECK: hello\n      CHECK: goodbye\nCHECK-LABEL: lab2\n CHECK-NEXT: world\n", "foo8\nfoo7\nfoo6\nfoo5\nfoo4\nfoo3\nfoo2\nfoo1\nlab1 hello\nfoo1\nfoo2\nfoo3\nfoo4\nfoo5\nfoo6\nfoo7\nfoo7\nfoo6\nfoo5\nfoo4\nfoo3\nfoo2\nfoo1\nlab2 world\nfoo1\nfoo2\nfoo3\nfoo4\nfoo5\nfoo6\nfoo7\nfoo8\nfoo9\nfoo0\n"),
];

/// The command lines [`VERBOSE_CASES`] run under: remarks (`-dump-input=never`), the dump's
/// annotations (`-v`, `-vv`), its filters and contexts, options that change the matches, and
/// `--color`.
const MODES: &[&[&str]] = &[
    &[],
    &["-v"],
    &["-vv"],
    &["-v", "-dump-input=never"],
    &["-vv", "-dump-input=never"],
    &["-vv", "-dump-input=always"],
    &["-dump-input=always"],
    &["-dump-input-filter=all"],
    &["-dump-input-filter=annotation-full", "-v"],
    &["-dump-input-filter=annotation", "-vv"],
    &["-dump-input-context=1", "-vv"],
    &["-dump-input-context=0"],
    &["--implicit-check-not=b", "-vv"],
    &["-dump-input=always", "-dump-input-filter=error", "-v"],
    &[
        "-dump-input=always",
        "-dump-input-filter=annotation",
        "-dump-input-context=2",
    ],
    &["--strict-whitespace", "-vv", "-dump-input=always"],
    &["--match-full-lines", "-v"],
    &["--allow-deprecated-dag-overlap", "-vv"],
    &["--color"],
    &["--color", "-v"],
    &["--color", "-vv", "-dump-input=always"],
    &["--color", "-v", "-dump-input=never"],
    &["--color", "-dump-input-context=1"],
];

/// One run's exit code and stderr.
struct Run {
    code: i32,
    stderr: String,
}

fn run_llvm(path: &str, args: &[&str], input: &str) -> Run {
    run_llvm_env(path, None, args, input)
}

fn run_llvm_env(path: &str, env_opts: Option<&str>, args: &[&str], input: &str) -> Run {
    let mut cmd = Command::new(LLVM_FILECHECK);
    cmd.env_remove("FILECHECK_OPTS");
    if let Some(e) = env_opts {
        cmd.env("FILECHECK_OPTS", e);
    }
    let mut child = cmd
        .arg(path)
        .args(args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("LLVM FileCheck runs");
    // FileCheck exits before reading its input on usage errors; a broken
    // pipe then is expected, not a failure.
    let _ = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes());
    let out = child.wait_with_output().expect("LLVM FileCheck finishes");
    Run {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).replace(LLVM_FILECHECK, "glow-filecheck"),
    }
}

/// glow-filecheck as its binary would run, through its own command-line parser.
fn run_glow(path: &str, check_text: &str, args: &[&str], input: &str) -> Run {
    run_glow_env(path, check_text, None, args, input)
}

fn run_glow_env(
    path: &str,
    check_text: &str,
    env_opts: Option<&str>,
    args: &[&str],
    input: &str,
) -> Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let parsed = match cli::parse(env_opts, &args) {
        Ok(p) => p,
        // As the binary started as `glow-filecheck` prints it.
        Err(msg) => {
            return Run {
                code: 1,
                stderr: cli::parse_error_text("FileCheck", "glow-filecheck", &msg) + "\n",
            }
        }
    };
    let dump = parsed
        .dump_input()
        .expect("no table case asks for -dump-input=help");
    let command_line = std::iter::once("glow-filecheck")
        .chain(std::iter::once(path))
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let opts = match parsed.options(dump, command_line) {
        Ok(o) => o,
        // The binary prints this and exits 2, as LLVM does.
        Err(msg) => {
            return Run {
                code: 2,
                stderr: msg + "\n",
            }
        }
    };
    let out = check(path, check_text, "<stdin>", input, &opts);
    Run {
        code: out.exit_code,
        stderr: out.stderr,
    }
}

#[test]
#[cfg_attr(
    not(has_llvm_filecheck),
    ignore = "no /usr/lib/llvm-19/bin/FileCheck (apt-get install llvm-19-tools)"
)]
fn agrees_with_llvm_filecheck() {
    let dir = std::env::temp_dir().join(format!("glow-fc-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    let mut code_mismatches = Vec::new();
    let mut text_mismatches = Vec::new();
    for (i, (check_text, input, args)) in CASES.iter().enumerate() {
        let path = dir.join(format!("case{i}.txt"));
        std::fs::write(&path, check_text).expect("temp file is writable");
        let name = path.to_string_lossy().to_string();
        let llvm = run_llvm(&name, args, input);
        let glow = run_glow(&name, check_text, args, input);
        if glow.code != llvm.code {
            code_mismatches.push(format!(
                "case {i} {check_text:?} on {input:?} {args:?}: llvm {}, glow {}",
                llvm.code, glow.code
            ));
        }
        if llvm.stderr != glow.stderr && !STDERR_DIFFERS.contains(&i) {
            text_mismatches.push(format!(
                "case {i}:\n--- llvm\n{}--- glow\n{}",
                llvm.stderr, glow.stderr
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        code_mismatches.is_empty(),
        "exit codes differ:\n{}",
        code_mismatches.join("\n")
    );
    assert!(
        text_mismatches.is_empty(),
        "stderr differs:\n{}",
        text_mismatches.join("\n")
    );
}

#[test]
#[cfg_attr(
    not(has_llvm_filecheck),
    ignore = "no /usr/lib/llvm-19/bin/FileCheck (apt-get install llvm-19-tools)"
)]
fn verbose_and_dump_modes_agree_with_llvm_filecheck() {
    let dir = std::env::temp_dir().join(format!("glow-fc-modes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    let mut mismatches = Vec::new();
    for (i, (check_text, input)) in VERBOSE_CASES.iter().enumerate() {
        let path = dir.join(format!("case{i}.txt"));
        std::fs::write(&path, check_text).expect("temp file is writable");
        let name = path.to_string_lossy().to_string();
        for args in MODES {
            let llvm = run_llvm(&name, args, input);
            let glow = run_glow(&name, check_text, args, input);
            if llvm.code != glow.code || llvm.stderr != glow.stderr {
                mismatches.push(format!(
                    "case {i} {check_text:?} on {input:?} {args:?}: exit llvm {} glow {}\n--- llvm\n{}--- glow\n{}",
                    llvm.code, glow.code, llvm.stderr, glow.stderr
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        mismatches.is_empty(),
        "{} of {} runs differ:\n{}",
        mismatches.len(),
        VERBOSE_CASES.len() * MODES.len(),
        mismatches.join("\n")
    );
}

#[test]
#[cfg_attr(
    not(has_llvm_filecheck),
    ignore = "no /usr/lib/llvm-19/bin/FileCheck (apt-get install llvm-19-tools)"
)]
fn filecheck_opts_agree_with_llvm_filecheck() {
    let dir = std::env::temp_dir().join(format!("glow-fc-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    let mut mismatches = Vec::new();
    for (i, (check_text, input, env, args)) in ENV_CASES.iter().enumerate() {
        let path = dir.join(format!("case{i}.txt"));
        std::fs::write(&path, check_text).expect("temp file is writable");
        let name = path.to_string_lossy().to_string();
        let llvm = run_llvm_env(&name, Some(env), args, input);
        let glow = run_glow_env(&name, check_text, Some(env), args, input);
        if llvm.code != glow.code || llvm.stderr != glow.stderr {
            mismatches.push(format!(
                "case {i} FILECHECK_OPTS={env:?} {args:?}: exit llvm {} glow {}\n--- llvm\n{}--- glow\n{}",
                llvm.code, glow.code, llvm.stderr, glow.stderr
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
