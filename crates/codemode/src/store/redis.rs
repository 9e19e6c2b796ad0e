//! `RedisRunStore`: suspended runs in Redis, shared by every gateway that points at the same
//! database.
//!
//! Keys (prefix `codemode:`): `run:<id>` (hash: `session`, `agent`, `sealed`, `expires`, and
//! `claim` while a `wait` holds it), `landed:<id>` and `calls:<id>` (hashes by guest call id),
//! `runs` (sorted set of run ids by expiry, for the cap) and `lease:<instance>`. TTL is key expiry
//! (`snapshotTtlSeconds` on park; the claim's hold while a `wait` runs); every step that reads and
//! writes is one Lua script, so it is atomic against every other gateway. Times come from the
//! Redis server's clock (`TIME`), never from the gateways'.

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::MultiplexedConnection;
use redis::{Script, Value};

use super::memory::ttl_ms;
use super::{
    ClaimError, Claimed, MAX_SUSPENDED_RUNS, ParkChanges, Parked, Progress, RunRecord, RunStore, StoreError,
};

const PREFIX: &str = "codemode:";

/// Server time in milliseconds, as a Lua prelude.
const NOW: &str = "local __t = redis.call('TIME'); local now = tonumber(__t[1]) * 1000 + math.floor(tonumber(__t[2]) / 1000)\n";

const PARK: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local ttl = tonumber(ARGV[5])
if ARGV[6] == '1' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 'gone' end
  if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[7]) then return 'full' end
else
  if redis.call('HEXISTS', KEYS[1], 'claim') == 0 then return 'gone' end
end
redis.call('HSET', KEYS[1], 'session', ARGV[2], 'agent', ARGV[3], 'sealed', ARGV[4], 'expires', now + ttl)
redis.call('HDEL', KEYS[1], 'claim')
local n = tonumber(ARGV[8])
local i = 9
for k = 1, n do redis.call('HDEL', KEYS[2], ARGV[i]); i = i + 1 end
while i < #ARGV do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]); i = i + 2 end
for k = 1, 3 do if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIRE', KEYS[k], ttl) end end
redis.call('ZADD', KEYS[4], now + ttl, ARGV[1])
return 'stored'
"#;

const CLAIM: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'unavailable'} end
local f = redis.call('HMGET', KEYS[1], 'session', 'agent', 'claim')
if f[3] then return {'resuming'} end
if f[1] ~= ARGV[1] then return {'session'} end
if f[2] ~= ARGV[2] then return {'agent'} end
local hold = tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'claim', ARGV[3])
for k = 1, 3 do if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIRE', KEYS[k], hold) end end
redis.call('ZADD', KEYS[4], now + hold, ARGV[5])
return {'ok', redis.call('HGET', KEYS[1], 'sealed'), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3])}
"#;

const RELEASE: &str = r#"
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'claim')
local expires = tonumber(redis.call('HGET', KEYS[1], 'expires') or '0')
if expires <= now then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]); redis.call('ZREM', KEYS[4], ARGV[2]); return 1
end
for k = 1, 3 do if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIREAT', KEYS[k], expires) end end
redis.call('ZADD', KEYS[4], expires, ARGV[2])
return 1
"#;

const LAND: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
"#;

const INTERRUPT: &str = r#"
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
"#;

const CANCEL: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'claim') == 1 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
"#;

const END_SESSION: &str = r#"
local n = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local run = ARGV[2] .. 'run:' .. id
  if redis.call('HGET', run, 'session') == ARGV[1] then
    redis.call('DEL', run, ARGV[2] .. 'landed:' .. id, ARGV[2] .. 'calls:' .. id)
    redis.call('ZREM', KEYS[1], id)
    n = n + 1
  end
end
return n
"#;

const COUNT: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
"#;

/// Suspended runs in a Redis database (see the module docs).
pub struct RedisRunStore {
    client: redis::Client,
    conn: std::sync::Mutex<Option<MultiplexedConnection>>,
    scripts: Scripts,
}

struct Scripts {
    park: Script,
    claim: Script,
    release: Script,
    land: Script,
    interrupt: Script,
    cancel: Script,
    end_session: Script,
    count: Script,
}

impl std::fmt::Debug for RedisRunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRunStore").finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(format!("redis: {e}"))
}

fn key(kind: &str, id: &str) -> String {
    format!("{PREFIX}{kind}:{id}")
}

fn run_keys(id: &str) -> [String; 4] {
    [key("run", id), key("landed", id), key("calls", id), format!("{PREFIX}runs")]
}

fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.clone().into_bytes()),
        Value::Okay => Some(b"OK".to_vec()),
        Value::Int(n) => Some(n.to_string().into_bytes()),
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    bytes(v).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// A flat `HGETALL` answer as `(call id, value)` pairs (fields that are not call ids are skipped).
fn pairs(v: &Value) -> Vec<(u32, Vec<u8>)> {
    let items: Vec<&Value> = match v {
        Value::Array(items) => items.iter().collect(),
        Value::Map(items) => items.iter().flat_map(|(k, v)| [k, v]).collect(),
        _ => Vec::new(),
    };
    items
        .chunks(2)
        .filter_map(|kv| match kv {
            [k, v] => Some((text(k)?.parse().ok()?, bytes(v)?)),
            _ => None,
        })
        .collect()
}

impl RedisRunStore {
    /// Connects to `redis://HOST:PORT/DB` (fails now if Redis cannot be reached).
    pub async fn connect(address: &str) -> Result<RedisRunStore, StoreError> {
        let client = redis::Client::open(address)
            .map_err(|e| StoreError::Address { address: address.to_owned(), reason: e.to_string() })?;
        let script = |body: &str| Script::new(&format!("{NOW}{body}"));
        let store = RedisRunStore {
            client,
            conn: std::sync::Mutex::new(None),
            scripts: Scripts {
                park: script(PARK),
                claim: script(CLAIM),
                release: script(RELEASE),
                land: script(LAND),
                interrupt: script(INTERRUPT),
                cancel: script(CANCEL),
                end_session: script(END_SESSION),
                count: script(COUNT),
            },
        };
        store.conn().await?;
        Ok(store)
    }

    /// The shared connection (reconnecting after a failure).
    async fn conn(&self) -> Result<MultiplexedConnection, StoreError> {
        if let Some(c) = &*self.conn.lock().unwrap_or_else(|p| p.into_inner()) {
            return Ok(c.clone());
        }
        let c = self.client.get_multiplexed_async_connection().await.map_err(failed)?;
        *self.conn.lock().unwrap_or_else(|p| p.into_inner()) = Some(c.clone());
        Ok(c)
    }

    /// A command's result; a connection error drops the connection so the next call reconnects.
    fn check<T>(&self, result: redis::RedisResult<T>) -> Result<T, StoreError> {
        result.map_err(|e| {
            if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
                *self.conn.lock().unwrap_or_else(|p| p.into_inner()) = None;
            }
            failed(e)
        })
    }
}

#[async_trait]
impl RunStore for RedisRunStore {
    async fn park(
        &self,
        record: RunRecord,
        ttl: Duration,
        changes: ParkChanges,
    ) -> Result<Parked, StoreError> {
        let keys = run_keys(&record.run_id);
        let answer: String = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                let mut inv = self.scripts.park.prepare_invoke();
                for k in &keys {
                    inv.key(k);
                }
                inv.arg(&record.run_id)
                    .arg(&record.session_id)
                    .arg(&record.agent_run_id)
                    .arg(&record.sealed)
                    .arg(ttl_ms(ttl).max(1))
                    .arg(if changes.new { "1" } else { "0" })
                    .arg(MAX_SUSPENDED_RUNS)
                    .arg(changes.consumed.len());
                for id in &changes.consumed {
                    inv.arg(id);
                }
                for (id, owner) in &changes.register {
                    inv.arg(id).arg(owner);
                }
                inv.invoke_async(c).await
            }
            .await;
            self.check(r)
        }?;
        Ok(match answer.as_str() {
            "stored" => Parked::Stored,
            "full" => Parked::Full,
            _ => Parked::Gone,
        })
    }

    async fn claim(
        &self,
        run_id: &str,
        session_id: &str,
        agent_run_id: &str,
        claimant: &str,
        hold: Duration,
    ) -> Result<Claimed, ClaimError> {
        let keys = run_keys(run_id);
        let answer: Value = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                let mut inv = self.scripts.claim.prepare_invoke();
                for k in &keys {
                    inv.key(k);
                }
                inv.arg(session_id).arg(agent_run_id).arg(claimant).arg(ttl_ms(hold).max(1)).arg(run_id);
                inv.invoke_async(c).await
            }
            .await;
            self.check(r)
        }?;
        let Value::Array(parts) = answer else {
            return Err(ClaimError::Store(StoreError::Unavailable("redis: unexpected claim answer".into())));
        };
        match parts.first().and_then(text).as_deref() {
            Some("ok") => Ok(Claimed {
                sealed: parts.get(1).and_then(bytes).unwrap_or_default(),
                landed: parts.get(2).map(pairs).unwrap_or_default(),
                calls: parts
                    .get(3)
                    .map(pairs)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
                    .collect(),
            }),
            Some("resuming") => Err(ClaimError::AlreadyResuming),
            Some("session") => Err(ClaimError::OtherSession),
            Some("agent") => Err(ClaimError::OtherAgentRun),
            _ => Err(ClaimError::Unavailable),
        }
    }

    async fn release(&self, run_id: &str, claimant: &str) -> Result<(), StoreError> {
        let keys = run_keys(run_id);
        let _: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                let mut inv = self.scripts.release.prepare_invoke();
                for k in &keys {
                    inv.key(k);
                }
                inv.arg(claimant).arg(run_id).invoke_async(c).await
            }
            .await;
            self.check(r)
        }?;
        Ok(())
    }

    async fn progress(&self, run_id: &str) -> Result<Progress, StoreError> {
        let (landed, calls): (Value, Value) = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                redis::pipe()
                    .atomic()
                    .cmd("HGETALL")
                    .arg(key("landed", run_id))
                    .cmd("HGETALL")
                    .arg(key("calls", run_id))
                    .query_async(c)
                    .await
            }
            .await;
            self.check(r)
        }?;
        Ok(Progress {
            landed: pairs(&landed),
            calls: pairs(&calls)
                .into_iter()
                .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
                .collect(),
        })
    }

    async fn land(&self, run_id: &str, call: u32, owner: &str, reply: Vec<u8>) -> Result<bool, StoreError> {
        let keys = run_keys(run_id);
        let landed: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                let mut inv = self.scripts.land.prepare_invoke();
                for k in &keys[..3] {
                    inv.key(k);
                }
                inv.arg(call).arg(owner).arg(&reply).invoke_async(c).await
            }
            .await;
            self.check(r)
        }?;
        Ok(landed == 1)
    }

    async fn interrupt(&self, run_id: &str, call: u32, owner: &str) -> Result<bool, StoreError> {
        let done: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                self.scripts
                    .interrupt
                    .key(key("calls", run_id))
                    .key(key("lease", owner))
                    .arg(call)
                    .arg(owner)
                    .invoke_async(c)
                    .await
            }
            .await;
            self.check(r)
        }?;
        Ok(done == 1)
    }

    async fn remove(&self, run_id: &str) -> Result<(), StoreError> {
        let [run, landed, calls, runs] = run_keys(run_id);
        {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                redis::pipe()
                    .atomic()
                    .cmd("DEL")
                    .arg(&run)
                    .arg(&landed)
                    .arg(&calls)
                    .ignore()
                    .cmd("ZREM")
                    .arg(&runs)
                    .arg(run_id)
                    .ignore()
                    .query_async::<()>(c)
                    .await
            }
            .await;
            self.check(r)
        }
    }

    async fn cancel(&self, run_id: &str) -> Result<bool, StoreError> {
        let keys = run_keys(run_id);
        let done: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                let mut inv = self.scripts.cancel.prepare_invoke();
                for k in &keys {
                    inv.key(k);
                }
                inv.arg(run_id).invoke_async(c).await
            }
            .await;
            self.check(r)
        }?;
        Ok(done == 1)
    }

    async fn end_session(&self, session_id: &str) -> Result<usize, StoreError> {
        let n: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                self.scripts
                    .end_session
                    .key(format!("{PREFIX}runs"))
                    .arg(session_id)
                    .arg(PREFIX)
                    .invoke_async(c)
                    .await
            }
            .await;
            self.check(r)
        }?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    async fn contains(&self, run_id: &str) -> Result<bool, StoreError> {
        let n: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async { redis::cmd("EXISTS").arg(key("run", run_id)).query_async(c).await }.await;
            self.check(r)
        }?;
        Ok(n == 1)
    }

    async fn count(&self) -> Result<usize, StoreError> {
        let n: i64 = {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async { self.scripts.count.key(format!("{PREFIX}runs")).invoke_async(c).await }.await;
            self.check(r)
        }?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    async fn heartbeat(&self, instance: &str, ttl: Duration) -> Result<(), StoreError> {
        {
            let mut conn = self.conn().await?;
            let c = &mut conn;
            let r = async {
                redis::cmd("SET")
                    .arg(key("lease", instance))
                    .arg(1)
                    .arg("PX")
                    .arg(ttl_ms(ttl).max(1))
                    .query_async::<()>(c)
                    .await
            }
            .await;
            self.check(r)
        }
    }
}
