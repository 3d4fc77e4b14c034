#[crew::test(unhandled_panic = "abort")]
async fn strict() {}

fn main() {}
