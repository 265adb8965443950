//! Generates the `.gir` parser from `src/grammar.lalrpop` into `OUT_DIR`;
//! reruns only when the grammar changes.
fn main() {
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .emit_rerun_directives(true)
        .process()
        .expect("lalrpop grammar");
}
