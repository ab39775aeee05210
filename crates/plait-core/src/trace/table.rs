//! Result tables defined once: a struct of columns from which both the JSON (serde) and the
//! columns handed to Python ([`Table::columns`]) are derived, so a column cannot be forgotten
//! by either. `docs/results.md` documents every column (a test checks that it names them all).

/// One column of a table, borrowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Column<'a> {
    F64(&'a [f64]),
    U64(&'a [u64]),
    Text(&'a [String]),
    /// Row indices into the table named `of` (`"flows"`, `"links"`): Python turns them into
    /// categoricals of that table's names, so a row costs four bytes, not a string.
    Index {
        rows: &'a [u32],
        of: &'static str,
    },
}

impl Column<'_> {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Text(v) => v.len(),
            Column::Index { rows, .. } => rows.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table of equal-length columns.
pub trait Table {
    /// The table's name in results (`flows`, `link_series`, ...).
    const NAME: &'static str;
    /// Every column, in order.
    fn columns(&self) -> Vec<(&'static str, Column<'_>)>;
    /// Number of rows.
    fn rows(&self) -> usize {
        self.columns().first().map_or(0, |(_, c)| c.len())
    }
}

/// How a column type is lent out as a [`Column`].
pub trait AsColumn {
    fn as_column(&self) -> Column<'_>;
}
impl AsColumn for Vec<f64> {
    fn as_column(&self) -> Column<'_> {
        Column::F64(self)
    }
}
impl AsColumn for Vec<u64> {
    fn as_column(&self) -> Column<'_> {
        Column::U64(self)
    }
}
impl AsColumn for Vec<String> {
    fn as_column(&self) -> Column<'_> {
        Column::Text(self)
    }
}

/// Declares a result table: a struct with one `Vec` per column (each documented), serialisable,
/// and its [`Table`] impl. A column declared `#[index(of = "flows")] flow: u32` holds row
/// indices into another table.
macro_rules! table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident ($table:literal) {
            $(
                $(#[doc = $doc:literal])*
                $(#[index(of = $of:literal)])?
                $col:ident : $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $col: Vec<$ty>, )*
        }

        impl $crate::trace::table::Table for $name {
            const NAME: &'static str = $table;
            fn columns(&self) -> Vec<(&'static str, $crate::trace::table::Column<'_>)> {
                vec![ $( (stringify!($col), table!(@column self.$col $(, $of)?)), )* ]
            }
        }
    };
    (@column $v:expr, $of:literal) => {
        $crate::trace::table::Column::Index { rows: &$v, of: $of }
    };
    (@column $v:expr) => {
        $crate::trace::table::AsColumn::as_column(&$v)
    };
}
pub(crate) use table;
