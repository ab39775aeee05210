//! `docs/results.md` documents every column of every result table: each table has its section
//! and each column is named in it (as written in the table, between backquotes in the prose,
//! or as a cell of the column table). Adding a column without documenting it fails here.

use plait_core::trace::results::{
    DropTable, FlowSeries, FlowTable, LinkSeries, LinkTable, PathSeries, PathTable, PickTable,
    RefusalTable,
};
use plait_core::trace::table::Table;

const DOCS: &str = include_str!("../../../docs/results.md");

/// The text of the section whose heading names `table`.
fn section(table: &str) -> &'static str {
    let heading = DOCS
        .match_indices("\n### ")
        .map(|(i, _)| i + 1)
        .find(|&i| {
            DOCS[i..]
                .lines()
                .next()
                .unwrap()
                .contains(&format!("`{table}`"))
        })
        .unwrap_or_else(|| panic!("docs/results.md has no section for `{table}`"));
    let end = DOCS[heading + 4..]
        .find("\n### ")
        .map_or(DOCS.len(), |j| heading + 4 + j);
    &DOCS[heading..end]
}

fn documented<T: Table + Default>() {
    let text = section(T::NAME);
    for (column, _) in T::default().columns() {
        let named = text.lines().any(|line| {
            line.split(['|', ',', '`', ' '])
                .any(|word| word.trim() == column)
        });
        assert!(
            named,
            "docs/results.md, section `{}`: column `{column}` is not documented",
            T::NAME
        );
    }
}

#[test]
fn every_column_of_every_table_is_documented() {
    documented::<FlowTable>();
    documented::<LinkTable>();
    documented::<PathTable>();
    documented::<FlowSeries>();
    documented::<LinkSeries>();
    documented::<PathSeries>();
    documented::<PickTable>();
    documented::<DropTable>();
    documented::<RefusalTable>();
}

#[test]
fn a_missing_section_is_noticed() {
    let r = std::panic::catch_unwind(|| section("no_such_table"));
    assert!(r.is_err());
}
