#[crew::main(leftovers = "drop")]
async fn main() {}
