#[crew::test(seed = 3, seeds = 10)]
async fn twice_seeded() {}

fn main() {}
