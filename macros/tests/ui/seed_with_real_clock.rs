#[crew::test(seed = 3, start_paused = false)]
async fn seeded_on_real_time() {}

fn main() {}
