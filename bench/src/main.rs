fn main() {
    eprintln!("campfire-bench: not built yet");
    std::process::exit(2);
}
