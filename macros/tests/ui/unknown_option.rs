#[crew::main(worker = 4)]
async fn main() {}
