#[crew::test(takeover = 1)]
async fn takes_a_bool() {}

fn main() {}
