//! Compile errors of `#[crew::main]` and `#[crew::test]`: each bad use in `tests/ui/` fails to
//! compile with the message in its `.stderr` file, which points at the bad token and names what
//! is accepted.

#[test]
fn bad_uses_fail_to_compile_with_clear_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
