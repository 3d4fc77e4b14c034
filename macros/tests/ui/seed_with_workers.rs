#[crew::test(seeds = 10, workers = 4)]
async fn seeded_on_four_workers() {}

fn main() {}
