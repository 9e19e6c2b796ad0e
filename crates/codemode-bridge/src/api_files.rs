//! Path rules of the read-only `API` virtual file table (`API.list` / `API.read`).
//!
//! The prelude serves `API.list` and `API.read` from the per-run file table without any bridge call,
//! with a JavaScript copy of exactly these rules; this module is the Rust reference (tests run both on
//! the same cases). Rules:
//!
//! - a path is at most [`MAX_API_PATH_CHARS`] characters (Unicode scalar values);
//! - NUL and backslashes are refused; so is a leading `/` (absolute paths);
//! - one trailing `/` is dropped (`mcp/` and `mcp` name the same directory);
//! - after that, every `/`-separated segment must be non-empty and neither `.` nor `..`;
//! - `list(prefix)` returns the files equal to the prefix or under `prefix/` (all files when the
//!   prefix is empty or absent), sorted by path; `read(path)` returns a file's content or refuses an
//!   unknown path.

use serde_json::{Value, json};

/// Longest accepted path.
pub const MAX_API_PATH_CHARS: usize = 256;

/// Why a path was refused. Messages match the prelude's errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApiPathError {
    /// Longer than [`MAX_API_PATH_CHARS`].
    #[error("path is longer than 256 characters")]
    TooLong,
    /// Contains NUL.
    #[error("path contains NUL")]
    Nul,
    /// Contains a backslash.
    #[error("path contains a backslash; use /")]
    Backslash,
    /// Starts with `/`.
    #[error("path must be relative, like \"mcp/index.d.ts\"")]
    Absolute,
    /// Has an empty segment (`a//b`).
    #[error("path has an empty segment")]
    EmptySegment,
    /// Has a `.` or `..` segment.
    #[error("path has a . or .. segment")]
    DotSegment,
    /// No such file.
    #[error("unknown file; API.list() shows the available files")]
    Unknown,
}

/// Validates and normalizes a path or prefix (see the module docs).
pub fn normalize_api_path(path: &str) -> Result<&str, ApiPathError> {
    if path.chars().count() > MAX_API_PATH_CHARS {
        return Err(ApiPathError::TooLong);
    }
    if path.contains('\0') {
        return Err(ApiPathError::Nul);
    }
    if path.contains('\\') {
        return Err(ApiPathError::Backslash);
    }
    if path.starts_with('/') {
        return Err(ApiPathError::Absolute);
    }
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return Ok(path);
    }
    for segment in path.split('/') {
        if segment.is_empty() {
            return Err(ApiPathError::EmptySegment);
        }
        if segment == "." || segment == ".." {
            return Err(ApiPathError::DotSegment);
        }
    }
    Ok(path)
}

/// One virtual file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiFile {
    /// Normalized path, e.g. `mcp/github.d.ts`.
    pub path: String,
    /// Content.
    pub content: String,
}

/// A run's virtual file table, sorted by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiFileTable {
    files: Vec<ApiFile>,
}

impl ApiFileTable {
    /// A table of `files`; every path must already be normalized and unique.
    pub fn new(mut files: Vec<ApiFile>) -> Result<ApiFileTable, String> {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        for (i, file) in files.iter().enumerate() {
            match normalize_api_path(&file.path) {
                Ok(p) if p == file.path && !p.is_empty() => {}
                _ => return Err(format!("API file path {:?} is not a normalized relative path", file.path)),
            }
            if i > 0 && files[i - 1].path == file.path {
                return Err(format!("API file path {:?} appears twice", file.path));
            }
        }
        Ok(ApiFileTable { files })
    }

    /// The files.
    pub fn files(&self) -> &[ApiFile] {
        &self.files
    }

    /// `API.list(prefix)`: `[{ path, bytes }]` of matching files (`bytes` = UTF-8 length).
    pub fn list(&self, prefix: Option<&str>) -> Result<Vec<Value>, ApiPathError> {
        let prefix = normalize_api_path(prefix.unwrap_or(""))?;
        Ok(self
            .files
            .iter()
            .filter(|f| {
                prefix.is_empty()
                    || f.path == prefix
                    || (f.path.starts_with(prefix) && f.path.as_bytes().get(prefix.len()) == Some(&b'/'))
            })
            .map(|f| json!({ "path": f.path, "bytes": f.content.len() }))
            .collect())
    }

    /// `API.read(path)`.
    pub fn read(&self, path: &str) -> Result<&str, ApiPathError> {
        let path = normalize_api_path(path)?;
        self.files.iter().find(|f| f.path == path).map(|f| f.content.as_str()).ok_or(ApiPathError::Unknown)
    }
}
