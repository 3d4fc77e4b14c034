//! [`Escaped`]: how crew writes a string a user gave it (a task's name, a thread name) into its
//! own output: the task dump, slow-poll reports, a task's `Display`.
//!
//! Invariants:
//! - The output holds no control character (C0, DEL, C1: newline, carriage return, NUL, the
//!   escape that starts an ANSI sequence), no line or paragraph separator (U+2028, U+2029) and no
//!   invisible format character (bidirectional overrides, zero-width spaces): each is written as
//!   its Rust escape (`\n`, `\u{1b}`, `\u{2028}`). So a row of the dump or a report stays one
//!   line, and a name cannot write to a terminal or forge a line of a log.
//! - `\` and `"` are escaped too (`\\`, `\"`), so the output reads back unambiguously: a name
//!   `a\nb` (backslash, n) and a name with a newline print differently.
//! - These are exactly the escapes of `str`'s `Debug`, without the surrounding quotes: one rule,
//!   the one Rust users already read.
//! - Every user-given string crew writes goes through here. Thread names are also refused at
//!   `Builder::build` when they would need escaping. The `tracing` feature's span fields
//!   (`task.name`) are values handed to the subscriber, which formats them; crew prints none.

use std::borrow::Cow;
use std::fmt;

/// A user-given string as crew prints it (see the module docs). Honours width and alignment
/// (`{:<20}`), measured on the escaped text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Escaped<'a>(pub(crate) &'a str);

impl<'a> Escaped<'a> {
    /// The escaped text: borrowed when nothing needed escaping (the common case).
    pub(crate) fn text(self) -> Cow<'a, str> {
        if self.0.chars().all(is_plain) {
            return Cow::Borrowed(self.0);
        }
        let quoted = format!("{:?}", self.0);
        // `Debug` for `str` writes `"…"`: the text between the quotes.
        let escaped = &quoted[1..quoted.len() - 1];
        if escaped == self.0 {
            Cow::Borrowed(self.0)
        } else {
            Cow::Owned(escaped.to_owned())
        }
    }

    /// True if printing the string changes it: it holds a character that the module docs list.
    pub(crate) fn changes(self) -> bool {
        matches!(self.text(), Cow::Owned(_))
    }
}

/// A character `Debug` writes as it is, checked without formatting: printable ASCII other than
/// `\` and `"`. Anything else takes the slow path, which asks `Debug` itself (and borrows
/// still, if `Debug` changed nothing: `café`).
fn is_plain(c: char) -> bool {
    (' '..='~').contains(&c) && c != '\\' && c != '"'
}

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_separators_and_format_characters_are_escaped() {
        let cases = [
            ("line1\nline2", r"line1\nline2"),
            ("cr\rlf", r"cr\rlf"),
            ("nul\0", r"nul\0"),
            ("\u{1b}[31mred", r"\u{1b}[31mred"),
            ("para\u{2028}graph\u{2029}", r"para\u{2028}graph\u{2029}"),
            ("bidi\u{202e}txt", r"bidi\u{202e}txt"),
            ("zero\u{200b}width", r"zero\u{200b}width"),
            ("c1\u{85}", r"c1\u{85}"),
            ("del\u{7f}", r"del\u{7f}"),
            ("tab\t", r"tab\t"),
            (r"back\slash", r"back\\slash"),
            ("say \"hi\"", r#"say \"hi\""#),
        ];
        for (raw, shown) in cases {
            assert_eq!(Escaped(raw).to_string(), shown, "{raw:?}");
            assert!(Escaped(raw).changes(), "{raw:?}");
            assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        }
    }

    #[test]
    fn printable_text_is_written_as_it_is() {
        for plain in ["fetch", "it's", "café", "Ünïcödé ok", "日本語", "emoji 🦀", ""] {
            assert_eq!(Escaped(plain).to_string(), plain);
            assert!(!Escaped(plain).changes(), "{plain:?}");
        }
    }

    #[test]
    fn width_is_measured_on_the_escaped_text() {
        assert_eq!(format!("[{:<6}]", Escaped("a\nb")), r"[a\nb  ]");
        assert_eq!(format!("[{:>3}]", Escaped("x")), "[  x]");
    }
}
