#[crew::main]
async fn main(_workers: usize) {}
