//! Verifier tests: aliasing and liveness (alloc/dealloc, use after dealloc,
//! read before write, through tensorviews).

use super::tests::{errors, func, line, one};

const XY: &[&str] = &[
    "%x = WeightVar float<2 x 3> mutable",
    "%y = WeightVar float<2 x 3> mutable",
];

#[test]
fn same_buffer_twice_only_if_in_or_inplace() {
    // In-place pairs and two reads are fine; `copy` is exempt.
    let ok = func(
        XY,
        &[
            "%a = elementadd @out %x, @in %x, @in %y",
            "%b = elementadd @out %y, @in %x, @in %y",
            "%c = elementmul @out %y, @in %x, @in %x",
            "%d = relu @out %x, @in %x",
            "%e = copy @out %x, @in %x",
        ],
    );
    assert_eq!(errors(&ok), vec![]);
    let w = &[
        "%x = WeightVar float<2 x 2> mutable",
        "%y = WeightVar float<2 x 2> mutable",
    ];
    let src = func(w, &["%m = matmul @out %x, @in %x, @in %y"]);
    one(
        &src,
        line(2, 0),
        "the same buffer `%x` is passed as `Dest` and `LHS`, which `matmul` does not allow",
    );
    let src = func(w, &["%t = transpose @out %x, @in %x { Shuffle: [1, 0] }"]);
    one(&src, line(2, 0), "passed as `Dest` and `Src`");
}

#[test]
fn dealloc_names_a_live_alloc() {
    let src = func(XY, &["%d = deallocactivation @out %x"]);
    one(
        &src,
        line(2, 0),
        "must name an `allocactivation`, but `%x` is a weight",
    );
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<6> }",
            "%v = tensorview @in %t { Ty: float<3>, Offsets: [3] }",
            "%d = deallocactivation @out %v",
            "%e = deallocactivation @out %t",
            "%f = deallocactivation @out %t",
        ],
    );
    let e = errors(&src);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert_eq!(e[0].0, line(2, 2));
    assert!(e[0].1.contains("but `%v` is a tensorview"));
    assert_eq!(e[1].0, line(2, 4));
    assert!(e[1].1.contains("`%t` is deallocated twice"));
    let src = func(
        XY,
        &[
            "%r = relu @out %y, @in %x",
            "%d = deallocactivation @out %r",
        ],
    );
    one(&src, line(2, 1), "but `%r` is the result of `relu`");
}

#[test]
fn no_use_after_dealloc() {
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%v = tensorview @in %t { Ty: float<3>, Offsets: [1, 0] }",
            "%s = splat @out %t { Value: 0.0 }",
            "%d = deallocactivation @out %t",
            "%c = copy @out %y, @in %t",
            "%w = tensorview @in %t { Ty: float<3>, Offsets: [0, 0] }",
            "%u = splat @out %v { Value: 1.0 }",
        ],
    );
    let e = errors(&src);
    assert_eq!(e.len(), 3, "{e:#?}");
    assert_eq!(e[0].0, line(2, 4));
    assert!(e[0].1.contains("`%t` is used after its deallocation"));
    assert_eq!(e[1].0, line(2, 5));
    assert_eq!(e[2].0, line(2, 6));
    assert!(e[2]
        .1
        .contains("`%v` (a view of `%t`) is used after its deallocation"));
}

#[test]
fn every_alloc_is_deallocated_reported_at_the_alloc() {
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%s = splat @out %t { Value: 0.0 }",
            "%c = copy @out %y, @in %t",
        ],
    );
    one(&src, line(2, 0), "`%t` is never deallocated");
}

#[test]
fn reads_need_an_earlier_write() {
    // Weights count as written; a write through a view writes the buffer.
    let ok = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%v = tensorview @in %t { Ty: float<6>, Offsets: [0, 0] }",
            "%s = splat @out %v { Value: 0.0 }",
            "%c = copy @out %y, @in %t",
            "%r = relu @out %x, @in %y",
            "%d = deallocactivation @out %t",
        ],
    );
    assert_eq!(errors(&ok), vec![]);
    // A tensorview is not a read; the first real read is reported, once.
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%v = tensorview @in %t { Ty: float<6>, Offsets: [0, 0] }",
            "%c = relu @out %y, @in %t",
            "%e = relu @out %x, @in %t",
            "%d = deallocactivation @out %t",
        ],
    );
    one(&src, line(2, 2), "`%t` is read before anything writes it");
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<4 x 3> }",
            "%v = tensorview @in %t { Ty: float<12>, Offsets: [0, 0] }",
            "%i = inserttensor @inout %t, @in %x { Offsets: [0, 0] }",
            "%d = deallocactivation @out %t",
        ],
    );
    one(&src, line(2, 2), "`%t` is read before anything writes it");
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%v = tensorview @in %t { Ty: float<2 x 3>, Offsets: [0, 0] }",
            "%c = copy @out %y, @in %v",
            "%d = deallocactivation @out %t",
        ],
    );
    one(&src, line(2, 2), "`%v` (a view of `%t`) is read before");
    // A dealloc of a never-written buffer is fine; the @out of touch writes.
    let ok = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%d = deallocactivation @out %t",
            "%u = allocactivation { Ty: float<2 x 3> }",
            "%w = touch @out %u",
            "%c = copy @out %y, @in %u",
            "%e = deallocactivation @out %u",
        ],
    );
    assert_eq!(errors(&ok), vec![]);
}
