fn main() {
    println!("{}", sample::greet("airlock"));
}
