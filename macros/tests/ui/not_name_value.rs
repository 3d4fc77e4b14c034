#[crew::main(workers)]
async fn main() {}
