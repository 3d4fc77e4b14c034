#[crew::test(task_dump = false)]
async fn no_dump() {}

fn main() {}
