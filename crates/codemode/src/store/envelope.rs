//! The sealed run record: what a shared [`RunStore`](super::RunStore) holds for one suspended run.
//!
//! Layout (little endian):
//! `MAGIC "CMRUNREC" | version u16 | module identity [32] | catalog identity [32] | state_len u32 |
//!  state (JSON) | snapshot_len u32 | snapshot | mac [32]`
//! where the MAC is HMAC-SHA256, keyed by the state key (`--state-key-env`), over every byte before
//! it. A record is opened only if its MAC verifies (nothing in it is trusted before), its version is
//! this one, and both identities are the opener's: the guest module identity (the compiled guest and
//! engine) and the catalog identity (the tool catalog, MCP API and base image a snapshot is
//! restored into). The sandbox snapshot inside keeps its own format and checks.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// Format version of sealed records.
pub const VERSION: u16 = 1;
const MAGIC: &[u8; 8] = b"CMRUNREC";
const MAC_LEN: usize = 32;

/// A 32-byte identity (SHA-256).
pub type Identity = [u8; 32];

/// SHA-256 of `parts`, each prefixed by its length.
pub fn identity(parts: &[&[u8]]) -> Identity {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().into()
}

/// The key that seals records. Keys shorter than 16 bytes are refused.
#[derive(Clone)]
pub struct StateKey(Vec<u8>);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

/// Shortest accepted state key, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

impl StateKey {
    /// A key from secret bytes (at least [`MIN_KEY_BYTES`]).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<StateKey, EnvelopeError> {
        let bytes = bytes.into();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(EnvelopeError::ShortKey { bytes: bytes.len() });
        }
        Ok(StateKey(bytes))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length.
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable_key())
    }
}

#[cold]
fn unreachable_key() -> Hmac<Sha256> {
    // `new_from_slice` refuses no key length for HMAC; keep a defined (useless) fallback anyway.
    <Hmac<Sha256> as KeyInit>::new(&Default::default())
}

/// Why a sealed record cannot be opened.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// Not a sealed run record, or cut short.
    #[error("the stored run is not a codemode run record or is truncated")]
    Malformed,
    /// The MAC does not verify: another state key, or altered bytes.
    #[error(
        "the stored run failed its integrity check (it was sealed with another state key, or altered); it was not restored"
    )]
    Mac,
    /// Another format version.
    #[error("the stored run has record format version {found}; this gateway reads version {VERSION}")]
    Version {
        /// The record's version.
        found: u16,
    },
    /// Suspended by another guest module (another build of codemode).
    #[error(
        "the stored run was suspended by a different guest module (another codemode build); resume it on a gateway of that build"
    )]
    Module,
    /// Suspended over another catalog.
    #[error(
        "the stored run was suspended over a different tool catalog (other upstream tools or configuration); resume it on a gateway with that catalog"
    )]
    Catalog,
    /// The state key is too short.
    #[error("the state key has {bytes} bytes; use at least {MIN_KEY_BYTES} random bytes")]
    ShortKey {
        /// Its length.
        bytes: usize,
    },
}

/// An opened record: the run state (JSON) and the sandbox snapshot.
#[derive(Debug)]
pub struct Opened {
    /// The run's state, JSON.
    pub state: Vec<u8>,
    /// The sandbox snapshot bytes.
    pub snapshot: Vec<u8>,
}

/// Seals a record.
pub fn seal(key: &StateKey, module: &Identity, catalog: &Identity, state: &[u8], snapshot: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 2 + 64 + 8 + state.len() + snapshot.len() + MAC_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(module);
    out.extend_from_slice(catalog);
    out.extend_from_slice(&(state.len() as u32).to_le_bytes());
    out.extend_from_slice(state);
    out.extend_from_slice(&(snapshot.len() as u32).to_le_bytes());
    out.extend_from_slice(snapshot);
    let mut mac = key.mac();
    mac.update(&out);
    out.extend_from_slice(&mac.finalize().into_bytes());
    out
}

/// Opens a record sealed with `key` for `module` and `catalog`.
pub fn open(
    key: &StateKey,
    module: &Identity,
    catalog: &Identity,
    sealed: &[u8],
) -> Result<Opened, EnvelopeError> {
    let body_len = sealed.len().checked_sub(MAC_LEN).ok_or(EnvelopeError::Malformed)?;
    if body_len < 8 + 2 + 64 + 8 || &sealed[..8] != MAGIC {
        return Err(EnvelopeError::Malformed);
    }
    let (body, tag) = sealed.split_at(body_len);
    let mut mac = key.mac();
    mac.update(body);
    mac.verify_slice(tag).map_err(|_| EnvelopeError::Mac)?;
    let version = u16::from_le_bytes([body[8], body[9]]);
    if version != VERSION {
        return Err(EnvelopeError::Version { found: version });
    }
    if &body[10..42] != module {
        return Err(EnvelopeError::Module);
    }
    if &body[42..74] != catalog {
        return Err(EnvelopeError::Catalog);
    }
    let mut rest = &body[74..];
    let mut take = || -> Result<Vec<u8>, EnvelopeError> {
        let len = rest
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or(EnvelopeError::Malformed)? as usize;
        let part = rest.get(4..4 + len).ok_or(EnvelopeError::Malformed)?.to_vec();
        rest = &rest[4 + len..];
        Ok(part)
    };
    let state = take()?;
    let snapshot = take()?;
    Ok(Opened { state, snapshot })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_and_open_round_trip_and_refuse_changes() {
        let key = StateKey::new(*b"0123456789abcdef").unwrap();
        let (m, c) = (identity(&[b"m"]), identity(&[b"c"]));
        let sealed = seal(&key, &m, &c, b"{\"a\":1}", b"snap");
        let opened = open(&key, &m, &c, &sealed).unwrap();
        assert_eq!((opened.state.as_slice(), opened.snapshot.as_slice()), (&b"{\"a\":1}"[..], &b"snap"[..]));
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            let e = open(&key, &m, &c, &bad).unwrap_err();
            assert!(matches!(e, EnvelopeError::Mac | EnvelopeError::Malformed), "byte {i}: {e:?}");
        }
        let other = StateKey::new(*b"fedcba9876543210").unwrap();
        assert_eq!(open(&other, &m, &c, &sealed).unwrap_err(), EnvelopeError::Mac);
        assert_eq!(open(&key, &c, &c, &sealed).unwrap_err(), EnvelopeError::Module);
        assert_eq!(open(&key, &m, &m, &sealed).unwrap_err(), EnvelopeError::Catalog);
        assert_eq!(open(&key, &m, &c, &sealed[..10]).unwrap_err(), EnvelopeError::Malformed);
        assert!(StateKey::new(*b"short").is_err());
    }
}
