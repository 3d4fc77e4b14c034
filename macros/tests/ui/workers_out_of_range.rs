#[crew::main(workers = 0)]
async fn main() {}
