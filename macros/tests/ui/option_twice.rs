#[crew::main(workers = 2, workers = 4)]
async fn main() {}
