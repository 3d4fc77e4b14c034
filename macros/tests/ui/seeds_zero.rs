#[crew::test(seeds = 0)]
async fn under_no_seed() {}

fn main() {}
