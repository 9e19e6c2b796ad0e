//! Path rules of the virtual `API` file table, shared word for word with the guest prelude.

/// Longest accepted path, in UTF-8 bytes (a path of exactly this length is checked further).
pub const MAX_PATH_BYTES: usize = 256;

/// Why `API.list(prefix)` or `API.read(path)` refused a path. The message is written for the
/// guest program (and so for the model): it says what is wrong and what to do instead.
///
/// A path is checked in this order; the first rule that fails decides the error:
///
/// 1. it contains no U+0000 ([`ApiPathError::Nul`]);
/// 2. it is at most [`MAX_PATH_BYTES`] bytes of UTF-8 ([`ApiPathError::TooLong`]);
/// 3. it is not empty ([`ApiPathError::Empty`]) — `API.list` treats a missing or empty prefix as
///    "everything" before checking;
/// 4. it contains no `\` ([`ApiPathError::Backslash`]);
/// 5. it does not start with `/` ([`ApiPathError::Absolute`]);
/// 6. `API.list` only: one trailing `/` is removed (`"mcp/"` is `"mcp"`);
/// 7. split at `/`, no segment is empty ([`ApiPathError::EmptySegment`]) and none is `.` or `..`
///    ([`ApiPathError::DotSegment`]);
/// 8. `API.read`: the path equals a file path exactly; `API.list`: the path equals a file path
///    (that one entry; not when the prefix ended in `/`) or is a directory, i.e. some file path starts with it plus `/` (every file
///    below it, in table order); otherwise [`ApiPathError::NotFound`].
///
/// Matching is exact and case-sensitive; there is no normalization of any kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApiPathError {
    /// `API.read("")`.
    #[error("API path is empty; API.list(\"mcp\") lists the declaration files")]
    Empty,
    /// More than [`MAX_PATH_BYTES`] bytes.
    #[error("API path is {bytes} bytes long; the limit is {MAX_PATH_BYTES}")]
    TooLong {
        /// Length of the refused path in UTF-8 bytes.
        bytes: usize,
    },
    /// Contains U+0000.
    #[error("API path contains a NUL character")]
    Nul,
    /// Contains `\`.
    #[error("API paths are separated by `/`, never `\\`")]
    Backslash,
    /// Starts with `/`.
    #[error("API paths are relative, without a leading `/` (e.g. \"mcp/index.d.ts\")")]
    Absolute,
    /// `//`, or a trailing `/` where a file is expected.
    #[error("API path has an empty segment (`//`, or a trailing `/` in API.read)")]
    EmptySegment,
    /// A `.` or `..` segment.
    #[error("API path has a `.` or `..` segment; paths name files directly (e.g. \"mcp/index.d.ts\")")]
    DotSegment,
    /// Well-formed, but no such file (or, for `API.list`, directory).
    #[error("no API file or directory {path:?}; API.list() lists every file")]
    NotFound {
        /// The refused path (already known to be at most [`MAX_PATH_BYTES`] bytes).
        path: String,
    },
}

/// Rules 1-7 for `API.read`: the path as given, if it is well-formed.
pub(crate) fn check_file_path(path: &str) -> Result<&str, ApiPathError> {
    check_common(path)?;
    check_segments(path)?;
    Ok(path)
}

/// Rules 1-7 for `API.list`: `None` for "every file", else the path without one trailing `/`.
pub(crate) fn check_list_prefix(prefix: Option<&str>) -> Result<Option<&str>, ApiPathError> {
    let Some(prefix) = prefix.filter(|p| !p.is_empty()) else { return Ok(None) };
    check_common(prefix)?;
    let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
    check_segments(trimmed)?;
    Ok(Some(trimmed))
}

fn check_common(path: &str) -> Result<(), ApiPathError> {
    if path.contains('\0') {
        return Err(ApiPathError::Nul);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(ApiPathError::TooLong { bytes: path.len() });
    }
    if path.is_empty() {
        return Err(ApiPathError::Empty);
    }
    if path.contains('\\') {
        return Err(ApiPathError::Backslash);
    }
    if path.starts_with('/') {
        return Err(ApiPathError::Absolute);
    }
    Ok(())
}

fn check_segments(path: &str) -> Result<(), ApiPathError> {
    for segment in path.split('/') {
        match segment {
            "" => return Err(ApiPathError::EmptySegment),
            "." | ".." => return Err(ApiPathError::DotSegment),
            _ => {}
        }
    }
    Ok(())
}
