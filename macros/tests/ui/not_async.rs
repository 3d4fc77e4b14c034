#[crew::main]
fn main() {}
