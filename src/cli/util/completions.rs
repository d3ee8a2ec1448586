//! `world util completions`: the checked-in bash, zsh and fish completions.

/// Render every completion file: (file name, bytes).
pub fn completions() -> Vec<(String, Vec<u8>)> {
    use clap_complete::Shell;
    let mut files = Vec::new();
    for (shell, name) in [
        (Shell::Bash, "world.bash"),
        (Shell::Zsh, "_world"),
        (Shell::Fish, "world.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut crate::cli::command(), "world", &mut buf);
        files.push((name.to_string(), buf));
    }
    files
}
