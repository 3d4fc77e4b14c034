#[crew::test]
struct NotATest;

fn main() {}
