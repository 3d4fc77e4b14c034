#[crew::main(workers = "four")]
async fn main() {}
