//! Suspend + resume through each run store: one `wait` on a run that yields again at once (claim,
//! restore, deliver, run to the next `yield_control`, snapshot, park), beside the in-process path.
//! Stores: the runtime's own map (default), `MemoryRunStore`, `FileRunStore` (a temp dir: its file
//! system's flush cost is part of the number) and `RedisRunStore` (a `redis-server` the bench starts
//! on 127.0.0.1 and a free port, no persistence; skipped with a note when `redis-server` is missing).
//!
//! Run with `cargo bench -p codemode --features redis --bench stores` on a quiet machine. Prints
//! min / median / p99 per store.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use codemode::store::{FileRunStore, MemoryRunStore, RunStore, StateKey};
use codemode::{
    CodeMode, CodeModeConfig, ExecInput, NestedCall, RunScope, ToolError, ToolHost, ToolOutcome, ToolSpec,
    WaitInput,
};

struct Echo;

#[async_trait]
impl ToolHost for Echo {
    async fn call(&self, call: NestedCall) -> Result<ToolOutcome, ToolError> {
        Ok(ToolOutcome::details(call.input))
    }
}

const ITERATIONS: usize = 500;

fn runtime(store: Option<Arc<dyn RunStore>>) -> CodeMode {
    let builder = CodeMode::builder(CodeModeConfig::enabled())
        .tools(vec![ToolSpec::core("echo")])
        .host(Arc::new(Echo))
        .namespaces(codemode::NamespaceRegistry::new());
    match store {
        Some(store) => builder.run_store(store, StateKey::new(*b"bench state key, 32 bytes long!!").unwrap()),
        None => builder,
    }
    .build()
    .unwrap()
}

async fn cycles(cm: &CodeMode) -> Vec<Duration> {
    let scope = RunScope::new("bench", "bench");
    let code = "const data = { list: [1, 2, 3], text: 'state that travels' }; for (;;) { await yield_control(); data.list.push(1); }";
    let r = cm.exec(&scope, ExecInput::code(code)).await;
    let codemode::CodeModeResult::Waiting(w) = r else { panic!("{}", r.to_json()) };
    let mut times = Vec::with_capacity(ITERATIONS);
    for i in 0..ITERATIONS + 20 {
        let start = Instant::now();
        let r = cm.wait(&scope, WaitInput::new(w.run_id.clone())).await;
        let took = start.elapsed();
        assert_eq!(r.status(), "waiting", "{}", r.to_json());
        if i >= 20 {
            times.push(took);
        }
    }
    cm.cancel_run(&w.run_id).await;
    times.sort();
    times
}

fn report(name: &str, times: &[Duration]) {
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{name:<28} min {:>9.1?}  median {:>9.1?}  p99 {:>9.1?}  ({} cycles)",
        times[0],
        at(0.5),
        at(0.99),
        times.len()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        println!("suspend + resume (one wait cycle), {ITERATIONS} cycles after 20 warm-up ones");
        report("in process (default)", &cycles(&runtime(None)).await);
        report("MemoryRunStore", &cycles(&runtime(Some(Arc::new(MemoryRunStore::new())))).await);
        let dir = std::env::temp_dir().join(format!("codemode-bench-store-{}", std::process::id()));
        report("FileRunStore", &cycles(&runtime(Some(Arc::new(FileRunStore::open(&dir).unwrap())))).await);
        let _ = std::fs::remove_dir_all(&dir);
        redis_case().await;
    });
}

#[cfg(feature = "redis")]
async fn redis_case() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!("codemode-bench-redis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = std::process::Command::new("redis-server")
        .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        println!("RedisRunStore               skipped: redis-server is not installed");
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let store =
        codemode::store::RedisRunStore::connect(&format!("redis://127.0.0.1:{port}/0")).await.unwrap();
    report("RedisRunStore (loopback)", &cycles(&runtime(Some(Arc::new(store)))).await);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(not(feature = "redis"))]
async fn redis_case() {
    println!("RedisRunStore               skipped: build with --features redis");
}
