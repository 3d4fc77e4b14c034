#[crew::test(leftovers = "ignore")]
async fn lenient() {}

fn main() {}
