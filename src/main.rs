fn main() -> std::process::ExitCode {
    retrystorm_cli::main()
}
