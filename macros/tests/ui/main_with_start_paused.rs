#[crew::main(start_paused = true)]
async fn main() {}
