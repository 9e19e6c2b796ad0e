//! How a query asks for an action: a creating `open`, openers that ask for an action ("how do I
//! ...", "can you ..."), asks for information ("tell me", "give me"), and resource-first tool
//! names whose CRUD verb comes last.

use codemode_catalog::{Catalog, CatalogOptions};
use codemode_core::{ToolOrigin, ToolSpec};

use crate::support::{
    any_in_top3_of_public, in_top3_of_public, small_catalog as owned, top_local_id as top_id,
};

fn forge() -> Catalog {
    let tools = [
        ("create_pull_request", "Create a new pull request"),
        ("update_pull_request", "Update a pull request: title, body, state (open or closed)"),
        ("get_pull_request_status", "Get the combined status of a pull request"),
        ("merge_pull_request", "Merge a pull request"),
        ("list_pull_requests", "List the pull requests of a repository (open, closed or all)"),
        ("create_issue", "Create a new issue"),
        ("update_issue_state", "Update an issue's state: open or closed"),
        ("list_issues", "List the issues of a repository, open or closed"),
        ("delete_branch", "Delete a branch"),
        ("list_branches", "List the branches of a repository"),
        ("create_branch", "Create a branch"),
        ("notify_user", "Notify a user: send them a message"),
        ("list_apps", "List the apps with their deployments and logs"),
        ("star_repository", "Star a repository"),
        ("list_collaborators", "List the collaborators of a repository and their permission"),
        ("push_files", "Push several files to a repository in one commit"),
        ("list_starred_repositories", "List the repositories the user starred"),
        ("get_file_contents", "Get the contents of a file"),
        ("deploy_app_logs_get", "Get the logs of an app deployment"),
        ("deploy_app_create", "Create an app deployment"),
    ];
    Catalog::build(
        tools
            .iter()
            .map(|&(name, description)| {
                ToolSpec::new(name, ToolOrigin::BundledPlugin, "forge").description(description)
            })
            .collect::<Vec<_>>(),
        &CatalogOptions::default(),
    )
}

fn top(catalog: &Catalog, query: &str) -> String {
    catalog.search(query, 1)[0].id.rsplit(':').next().unwrap_or_default().to_owned()
}

#[test]
fn open_a_work_item_creates_it_and_open_a_file_reads_it() {
    let forge = forge();
    assert_eq!(top(&forge, "open a PR from feature to main"), "create_pull_request");
    assert_eq!(top(&forge, "open an issue about the crash"), "create_issue");
    assert_eq!(top(&forge, "open a new issue"), "create_issue");
    // `open` of a file reads it; `open` as a state stays a state.
    assert_eq!(top(&forge, "open the file README"), "get_file_contents");
    assert_eq!(top(&forge, "open pull requests"), "list_pull_requests");
}

#[test]
fn an_opener_that_asks_for_an_action_takes_its_verb() {
    let forge = forge();
    // A question word would make these reads; the opener asks for the action.
    assert_eq!(top(&forge, "how do I delete a branch"), "delete_branch");
    assert_eq!(top(&forge, "is there a way to star a repository"), "star_repository");
    assert_eq!(top(&forge, "can you merge pull request 12 for me"), "merge_pull_request");
    assert_eq!(top(&forge, "I'd like to create an issue"), "create_issue");
    // Without a verb after the opener the question stays a read.
    assert_eq!(top(&forge, "how do I see the branches"), "list_branches");
}

#[test]
fn tell_me_and_give_me_ask_for_information() {
    let forge = forge();
    assert_eq!(top(&forge, "tell me the status of pull request 12"), "get_pull_request_status");
    assert_eq!(top(&forge, "give me the branches"), "list_branches");
}

#[test]
fn people_asks_reach_collaborators() {
    let forge = forge();
    // "which people can push" asks for the people who hold the permission (collaborators are
    // people), not for the push or a tool that merely names the user.
    assert_eq!(top(&forge, "which people can push to this repository"), "list_collaborators");
}

#[test]
fn a_resource_first_name_takes_its_trailing_crud_verb() {
    let forge = forge();
    // `deploy_app_logs_get` reads: `deploy` is its resource, `get` its action.
    assert_eq!(top(&forge, "show the deployment logs of my app"), "deploy_app_logs_get");
    assert_eq!(top(&forge, "make an app deployment"), "deploy_app_create");
}

#[test]
fn asking_the_assistant_what_it_knows_reaches_its_memory() {
    // With the 16 public catalogs loaded: what "you" know or have stored is the memory server's
    // knowledge, whatever the ask names (a launch, a vendor).
    let catalog = crate::support::public_catalog();
    for query in ["what do you know about the Hermes launch", "what do you know about our vendor Initech"] {
        let hits = catalog.search_hits(query, 3);
        assert!(hits.iter().any(|h| h.entry.id.contains(":memory:")), "{query:?}: {hits:#?}");
    }
    // Remembering something is writing it down.
    let desk = owned(&[
        ("memory", "search_nodes", "Search for nodes in the knowledge graph based on a query"),
        ("memory", "create_entities", "Create new entities in the knowledge graph"),
    ]);
    assert_eq!(top_id(&desk, "remember that Bob manages Carol"), "memory:create_entities");
}

#[test]
fn a_fact_to_keep_reaches_the_memory_server_among_all() {
    // With the 16 public catalogs loaded: the memory server's tools say "knowledge graph",
    // never remember; a fact to keep (or to drop) asks for that knowledge, and the ask also
    // says which server it is about (the owner stage), past the words the fact happens to hold
    // (`deploy`, `window`, `password`).
    let catalog = crate::support::public_catalog();
    for query in [
        "remember that the staging password rotates every month",
        "keep in mind that Omar is on leave in March",
        "jot down that Lena prefers email",
        "forget everything about project Hydra",
        "what's saved about 'Initech' and 'Ravi Shah'",
    ] {
        let hits = catalog.search_hits(query, 3);
        assert!(hits.iter().any(|h| h.entry.id.contains(":memory:")), "{query:?}: {hits:#?}");
    }
}

#[test]
fn who_did_an_action_asks_for_the_history() {
    let cloud = owned(&[
        ("cloud", "get_vm", "Get a virtual machine and its state"),
        ("cloud", "restart_vm", "Restart a virtual machine"),
        ("cloud", "list_operations", "List the operations history of a resource"),
    ]);
    // The past of any action verb after `who` asks who did it, as `who changed` does in the
    // vocabulary: the history, not the action or the thing.
    for query in ["who restarted the payments box", "who has restarted the payments box"] {
        let hits = cloud.search_hits(query, 3);
        assert_eq!(hits[0].entry.name, "list_operations", "{query:?}: {hits:#?}");
        assert!(hits[0].matched.contains("who changed"), "{hits:#?}");
    }
    // A read verb's past is no action taken on anything.
    let hits = cloud.search_hits("who viewed the payments box", 3);
    assert!(hits.iter().all(|h| !h.matched.contains("who changed")), "{hits:#?}");
}

#[test]
fn a_question_without_a_verb_reads() {
    let graph = owned(&[
        ("memory", "create_entities", "Create entities in the knowledge graph"),
        ("memory", "open_nodes", "Open nodes of the knowledge graph by their names"),
    ]);
    // The question mark makes the lookup a read: the write tool weighs less.
    assert_eq!(top_id(&graph, "entities in the knowledge graph"), "memory:create_entities");
    assert_eq!(top_id(&graph, "entities in the knowledge graph?"), "memory:open_nodes");
}

#[test]
fn an_ask_after_a_sentence_of_context_takes_its_verb() {
    let store = owned(&[
        ("store", "list_backups", "List the nightly backups of a share"),
        ("store", "delete_backup", "Delete a backup"),
    ]);
    // The first sentence is context; the verb that opens the next one is the ask, as after a
    // comma or a semicolon.
    for query in [
        "The nightly backups of the share are in. Delete the oldest one",
        "Nightly backups look fine! Delete the oldest one",
        "nightly backups of the share: delete the oldest one",
    ] {
        assert_eq!(top_id(&store, query), "store:delete_backup", "{query:?}");
    }
}

#[test]
fn how_a_page_looks_asks_for_a_picture_of_it() {
    let browser = owned(&[
        ("browser", "take_screenshot", "Take a screenshot of the page"),
        ("browser", "list_pages", "List the open pages"),
        ("browser", "get_console_message", "Get a console message of the page"),
    ]);
    for query in ["grab how the login screen currently looks", "what does it look like right now"] {
        assert_eq!(top_id(&browser, query), "browser:take_screenshot", "{query:?}");
    }
}

#[test]
fn membership_and_everyone_ask_for_people() {
    let org = owned(&[
        ("forge", "get_teams", "Get the teams the user is a member of"),
        ("cloud", "group_list", "List the resource groups of a subscription"),
        ("chat", "get_users", "Get the users of the workspace with their profiles"),
        ("chat", "list_workspaces", "List the workspaces"),
        ("logs", "workspace_list", "List the log workspaces"),
    ]);
    assert_eq!(top_id(&org, "which squads do I belong to?"), "forge:get_teams");
    assert_eq!(top_id(&org, "everyone in the workspace with their display names"), "chat:get_users");
}

#[test]
fn a_confirm_box_is_a_dialog_and_overwriting_writes() {
    let browser = owned(&[
        ("browser", "handle_dialog", "Handle a dialog"),
        ("browser", "click", "Click an element"),
        ("browser", "press_key", "Press a key"),
        ("files", "write_file", "Create a new file or replace an existing file with new content"),
        ("files", "read_file", "Read the contents of a file"),
    ]);
    assert_eq!(top_id(&browser, "say yes to the confirm box"), "browser:handle_dialog");
    assert_eq!(top_id(&browser, "overwrite notes.txt entirely"), "files:write_file");
}

#[test]
fn an_ask_to_change_a_thing_prefers_tools_that_change_one() {
    // The update tool is listed second: without the kinds, the two tie and the first wins.
    let wiki = owned(&[
        ("wiki", "create_page", "Create a page in a space"),
        ("wiki", "update_page", "Update a page in a space"),
        ("wiki", "get_page", "Get a page in a space"),
    ]);
    for query in ["retitle the page in the space", "rename the page", "move the page to another space"] {
        assert_eq!(top_id(&wiki, query), "wiki:update_page", "{query:?}");
    }
    let wiki = owned(&[
        ("wiki", "update_page", "Update a page in a space"),
        ("wiki", "create_page", "Create a page in a space"),
    ]);
    for query in ["clone the page", "file a page in the space"] {
        assert_eq!(top_id(&wiki, query), "wiki:create_page", "{query:?}");
    }
}

#[test]
fn write_kinds_are_write_verbs() {
    use codemode_catalog::search::{GroupKind, vocabulary};
    let groups = vocabulary();
    let writes: Vec<&String> = groups
        .iter()
        .filter(|g| g.kind == GroupKind::Verb(codemode_catalog::search::VerbClass::Write))
        .flat_map(|g| &g.words)
        .collect();
    let mut kinds = 0;
    for group in groups.iter().filter(|g| matches!(g.kind, GroupKind::WriteKind(_))) {
        kinds += 1;
        for w in &group.words {
            assert!(writes.contains(&w), "{w:?} of {:?} is no write verb", group.kind);
        }
    }
    assert_eq!(kinds, 2, "a create and a change group");
}

#[test]
fn an_ask_for_a_phrase_word_finds_the_phrase() {
    // `authenticated` is a form of the `sign in` phrase, `audit log` its own phrase: the asks that
    // name them (`whose token`, `who changed`) reach tools whose text holds the phrase.
    let forge = owned(&[
        ("forge", "get_me", "Get details of the authenticated user"),
        ("forge", "search_users", "Search users by name or account"),
        ("flags", "get_audit_log", "Get the audit log of an account"),
        ("flags", "list_flags", "List the flags of an account"),
    ]);
    assert_eq!(top_id(&forge, "whose token is this"), "forge:get_me");
    assert_eq!(top_id(&forge, "who changed the pricing flag"), "flags:get_audit_log");
}

#[test]
fn an_ask_for_one_word_counts() {
    // `until` asks for a wait, `biggest` for sizes, `end of` for a file's tail: question forms
    // that ask for a single word are kept like the others.
    use codemode_catalog::search::{GroupKind, vocabulary};
    assert!(
        vocabulary()
            .iter()
            .any(|g| matches!(&g.kind, GroupKind::Ask(forms) if forms.iter().any(|f| f == "until"))
                && g.words == ["wait"])
    );
    let browser = owned(&[
        ("browser", "wait_for", "Wait for the specified text to appear on the selected page"),
        ("browser", "take_screenshot", "Take a screenshot of the page or element"),
        ("browser", "list_pages", "Get a list of pages open in the browser"),
    ]);
    assert_eq!(top_id(&browser, "don't act until the tab displays 'Paid'"), "browser:wait_for");
    let files = owned(&[
        ("fs", "list_directory", "List the files of a directory"),
        ("fs", "list_directory_with_sizes", "List the files of a directory with their sizes"),
        ("fs", "read_text_file", "Read a file as text; 'tail' reads its last lines"),
    ]);
    assert_eq!(top_id(&files, "the biggest files in /var/log"), "fs:list_directory_with_sizes");
    assert_eq!(top_id(&files, "end of /srv/out.txt"), "fs:read_text_file");
}

#[test]
fn an_ask_to_cut_costs_finds_the_advisor() {
    let cloud = owned(&[
        ("cloud", "pricing_get", "Get retail prices and cost estimates of cloud services"),
        ("cloud", "appinsights_recommendation_list", "List code optimization recommendations"),
        ("cloud", "advisor_recommendation_list", "List advisor recommendations"),
    ]);
    // Cost savings come from the advisor, not from the price list or a code profiler.
    assert_eq!(top_id(&cloud, "cost savings suggestions"), "cloud:advisor_recommendation_list");
}

#[test]
fn asking_the_user_is_an_elicitation() {
    let tools = owned(&[
        ("forge", "get_user", "Get a user's profile by their name"),
        ("demo", "trigger-elicitation-request", "Trigger a request from the server for user elicitation"),
    ]);
    // The server asking its user for something elicits it; it looks no user up.
    assert_eq!(top_id(&tools, "prompt the user for their name"), "demo:trigger-elicitation-request");
    assert_eq!(top_id(&tools, "the profile of the user named dana"), "forge:get_user");
}

#[test]
fn a_slow_task_is_a_long_running_operation() {
    let tools = owned(&[
        ("jobs", "get_task_report", "Get the report of a finished task"),
        (
            "demo",
            "trigger-long-running-operation",
            "Demonstrates a long running operation with progress updates",
        ),
    ]);
    assert_eq!(top_id(&tools, "kick off a slow task"), "demo:trigger-long-running-operation");
    assert_eq!(top_id(&tools, "simulate a lengthy job"), "demo:trigger-long-running-operation");
}

#[test]
fn pulling_a_thing_over_drags_it() {
    // The real browser catalog: dropping files, clicking, hovering and dialogs are all near.
    in_top3_of_public(
        "playwright",
        "browser_drag",
        &[
            "pull the 'Backlog' card over onto the 'Doing' column",
            "grab the slider handle and pull it over to the 'Max' marker",
        ],
    );
}

#[test]
fn a_webhook_is_an_event_subscription() {
    // The real cloud router catalog: its event router says "event subscriptions", never webhooks.
    in_top3_of_public(
        "azure-namespace",
        "eventgrid",
        &["which webhook URLs get our custom pub/sub notifications"],
    );
}

#[test]
fn replacing_everything_in_a_file_overwrites_it() {
    // The real file-system catalog, where an edit tool also replaces (lines).
    in_top3_of_public(
        "filesystem",
        "write_file",
        &[
            "replace everything in /srv/app/.env with these three lines",
            "dump this JSON into /srv/app/config.json, replacing whatever's there",
        ],
    );
}

#[test]
fn everyday_words_reach_what_the_catalogs_call_it() {
    // Each over one real public catalog alone; the catalogs' own words differ from the ask's.
    for (catalog, tool, query) in [
        // a branch that diverged or drifted asks for the difference
        ("git", "git_diff", "~/code/web: how far has release/2.0 drifted from main, code-wise?"),
        // looking over asks for a review
        ("github", "request_pull_request_reviewers", "can someone look over my PR in acme/api"),
        // files hanging off a page are its attachments
        ("atlassian", "confluence_get_attachments", "files hanging off doc 4411"),
        // a name already taken asks whether it is available
        (
            "azure-all",
            "fileshares_fileshare_check-name-availability",
            "before I script the rollout: can I call the NFS volume projects-archive in westus2, or is someone already using that?",
        ),
        // a percentile is a latency metric
        ("azure-namespace", "monitor", "p99 response time of the agw-edge gateway today"),
        // a base URL is an endpoint
        (
            "azure-all",
            "foundryextensions_resource_get",
            "I need the base URL to call ai-west-eus from code - and is it on S0?",
        ),
        // what a file should be called renames it
        ("filesystem", "move_file", "reports/q1.md should be called reports/2025-q1.md"),
        // Cognitive Search and Cognitive Services are now AI Search and AI Services
        ("azure-all", "search_service_list", "do we have Cognitive Search instances in this subscription?"),
        // a point-in-time copy is a snapshot
        (
            "azure-all",
            "fileshares_fileshare_snapshot_get",
            "list the point-in-time copies of share team-docs",
        ),
        // an image hub is a container registry
        ("azure-all", "acr_registry_list", "which image hubs do we run in sub-dev"),
        // squashing a PR into a branch merges it
        ("github-legacy-npm", "merge_pull_request", "squash it into main: octo/app #9"),
    ] {
        in_top3_of_public(catalog, tool, &[query]);
    }
}

#[test]
fn everyday_wording_reaches_the_catalogs_concepts() {
    // The vocabulary's everyday wording of what the catalogs do (staged changes, an accessibility
    // outline, what the browser logged, a fan-out channel, a confirm box, room under a quota, ...):
    // tuning-source intents that rank their tool in the top 3 only with it (the rows after each
    // list's first run come from the later passes: developer, cloud, then tool by tool). Over
    // one catalog:
    for (catalog, tools, query) in [
        (
            "atlassian",
            &["jira_update_issue"][..],
            "PAY-77: fixVersion 3.2, labels payments,backend, story points 5",
        ),
        (
            "atlassian",
            &["jira_search_fields", "jira_get_project_fields"][..],
            "Story Points lives under some customfield_ number on our site; which one?",
        ),
        (
            "atlassian",
            &["jira_get_project_components"][..],
            "which subsystem buckets (Frontend, API, ...) are defined in PAY?",
        ),
        (
            "azure-all",
            &["pricing_get"][..],
            "before I pick a VM size, compare the hourly rate of an E8s v5 against an F8s v2 in eastus",
        ),
        (
            "azure-all",
            &["eventhubs_eventhub_consumergroup_update"][..],
            "fraud-scorer needs independent offsets on ehns-core/payments; set that up",
        ),
        (
            "azure-all",
            &["sql_server_firewall-rule_list"][..],
            "which IP ranges are allowed through to the orders-db01 host right now?",
        ),
        (
            "azure-namespace",
            &["cosmos"][..],
            "NoSQL doc store cdb-prod: pull records where total > 100 from orders",
        ),
        ("azure-namespace", &["cosmos"][..], "query the NoSQL documents in the orders collection"),
        ("chrome-devtools", &["handle_dialog"][..], "the are-you-sure box came up, click OK on it"),
        ("filesystem", &["directory_tree"][..], "nested listing of everything beneath a path"),
        (
            "github",
            &["list_repository_security_advisories"][..],
            "GHSA drafts acme/payments is sitting on, newest first",
        ),
        (
            "github",
            &["assign_copilot_to_issue_with_intent", "assign_copilot_to_issue"][..],
            "Nobody on the team has time for acme/web #57. Let the AI coding agent take a crack at it and open a fix PR against release/2.x.",
        ),
        (
            "github",
            &["update_pull_request_draft_state"][..],
            "PR 12 is no longer a draft, it can be reviewed now",
        ),
        (
            "github",
            &["get_release_by_tag"][..],
            "notes for v2.4.0 so I can summarize what shipped in the launch post",
        ),
        ("github", &["get_repository_tree"][..], "show the folder layout of the repo at tag v2.0"),
        (
            "github",
            &["get_dependabot_alert"][..],
            "vulnerble dependancy warning #12 in acme/web: which package and what fixed version?",
        ),
        ("memory", &["create_relations"][..], "record that Ana reports to Marco"),
        (
            "azure-all",
            &["fileshares_fileshare_check-name-availability"][..],
            "is 'projects' still free to use for a new managed NFS share in eastus",
        ),
        (
            "azure-all",
            &["postgres_server_param_get"][..],
            "shared_buffers value on pg-billing (rg-pay), login pgadmin",
        ),
        (
            "azure-all",
            &["appservice_webapp_settings_get-appsettings"][..],
            "show the config values injected into billing-api at runtime (rg-billing)",
        ),
        (
            "azure-all",
            &["marketplace_product_get"][..],
            "what plans and prcies does fortinet.fortigate-vm come with?",
        ),
        (
            "azure-all",
            &["appservice_webapp_diagnostic_list"][..],
            "what troubleshooting checks are available for contoso-portal in rg-web before I pick one",
        ),
        (
            "azure-namespace",
            &["workbooks"][..],
            "export the definition of the interactive report 'SLO overview' we keep in rg-ops",
        ),
        ("github", &["search_pull_requests"][..], "PRs by octocat merged into acme/web during May 2025"),
        ("azure-namespace", &["cosmos"][..], "account nosql-shop, retail/carts: items where userId = 'u-42'"),
        (
            "filesystem",
            &["read_multiple_files"][..],
            "open package.json, tsconfig.json and .eslintrc together so we can compare them",
        ),
        (
            "github",
            &["issue_dependency_write"][..],
            "#455 can't start until #440 is done in acme/storefront - wire that up",
        ),
        (
            "github",
            &["update_pull_request_branch"][..],
            "PR 512 in acme/web is way behind main, catch it up wiht main pls",
        ),
        ("github", &["update_pull_request_branch"][..], "PR 64 has fallen behind main, catch it up"),
        (
            "github-legacy-npm",
            &["search_issues"][..],
            "open bugs mentioning 'memory leak' anywhere on GitHub, most discussed first",
        ),
        ("playwright", &["browser_find", "browser_snapshot"][..], "does the page mention Checkout anywhere"),
    ] {
        any_in_top3_of_public(catalog, tools, query);
    }
    // With all 16 loaded (the server's twin or a neighbour took the top 3 without it):
    let keys = crate::intents::tool_keys();
    for (tools, query) in [
        (&["atlassian:confluence_get_page_views"][..], "how many people read our onboarding doc last month"),
        (
            &["azure-all:servicebus_topic_subscription_details"][..],
            "ERP sync is lagging. On sb-fin, the 'invoices' broadcast channel has a listener named erp-sync; how many messages are active vs dead-lettered there?",
        ),
        (
            &["azure-all:servicebus_topic_details"][..],
            "for the 'orders' fan-out channel in sb-prod, give me its subscriber count, pending scheduled backlog and size cap",
        ),
        (&["azure-namespace:cosmos"][..], "account nosql-shop, retail/carts: items where userId = 'u-42'"),
        (
            &["azure-namespace:confidentialledger"][..],
            "append an immutable audit record of today's payroll approval",
        ),
        (
            &["azure-namespace:quota"][..],
            "capacity planning: can sub-prod take 40 extra Dsv5 cores in eastus before we hit the limit?",
        ),
        (
            &["chrome-devtools:handle_dialog"][..],
            "a confirm box popped up asking 'Delete item?', click OK on it",
        ),
        (
            &["chrome-devtools:list_console_messages", "chrome-devtools:get_console_message"][..],
            "customer says checkout spins forever - check what errors the browser logged since load",
        ),
        (
            &["chrome-devtools:take_snapshot"][..],
            "how do I find the uid of that Submit button? give me the accessibility outline of the page",
        ),
        (&["chrome-devtools:select_page", "playwright:browser_tabs"][..], "switch focus to another tab"),
        (
            &["everything:simulate-research-query"][..],
            "I'm testing how my app shows long multi-step jobs. Kick off the mock literature-review job on 'quantum batteries' and let it stream progress.",
        ),
        (
            &["everything:trigger-long-running-operation"][..],
            "I'm testing my client's progress bar UI; kick off something that lasts about 10 seconds and reports progress in 5 increments.",
        ),
        (
            &["git:git_status", "git:git_diff_unstaged", "git:git_diff_staged"][..],
            "anything uncommitted lying around in /opt/tool?",
        ),
        (&["git:git_diff_staged"][..], "what exactly am I about to commit in ~/code/rustle?"),
        (&["github-legacy-npm:push_files"][..], "upload three files to the repo in one commit"),
        (
            &["playwright:browser_snapshot"][..],
            "give me the accesibility outline of whatever's showing, I need element refs",
        ),
        (&["playwright:browser_handle_dialog"][..], "press OK on the confirm box that popped up"),
        (
            &["playwright:browser_click"][..],
            "right-click the file row 'report.csv' to bring up the context menu",
        ),
        (
            &["atlassian:confluence_get_page_diff"][..],
            "what did the runbook look like before Tuesday's edits - compare v12 and v14 of 5512",
        ),
        (&["atlassian:confluence_get_page_diff"][..], "what was altered between v3 and v7 of the runbook"),
        (
            &["azure-all:cosmos_database_container_item_query"][..],
            "SELECT * FROM c WHERE c.status = 'failed' (account cosmos-shop, db shop, container orders)",
        ),
        (
            &["azure-all:applicationinsights_recommendation_list"][..],
            "any profiler-driven hints about slow code paths from our telemetry components in rg-observability?",
        ),
        (&["azure-all:compute_disk_update"][..], "grow the data disk disk-logs to 1 TB"),
        (
            &["azure-all:storagesync_serverendpoint_get"][..],
            "in fss-hq's hr-docs replication set, which local paths on the Windows hosts take part, and is cloud tiering on?",
        ),
        (
            &["azure-all:eventhubs_eventhub_consumergroup_get"][..],
            "offset cursors registered on the telemetry stream in ehns-iot - who's reading it?",
        ),
        (
            &["azure-all:functions_language_list"][..],
            "what runtimes can I write serverless handlers in? node, python, .net?",
        ),
        (
            &["azure-all:fileshares_fileshare_snapshot_get"][..],
            "which point-in-time backups exist for the managed NFS docs volume",
        ),
        (
            &["azure-namespace:deploy", "azure-namespace:cloudarchitect"][..],
            "Sketch the hosting topology diagram for my repo (React front end + Python API) and suggest a GitHub Actions pipeline for shipping it.",
        ),
        (
            &["chrome-devtools:evaluate_script"][..],
            "I need to know how many items are in localStorage and the value of window.__APP_VERSION__. Run a snippet in the page and return both.",
        ),
        (
            &["chrome-devtools:evaluate_script"][..],
            "execute a little JS snippet in the tab that returns document.title",
        ),
        (&["chrome-devtools:evaluate_script"][..], "run document.title in the page and give me the result"),
        (
            &["github:actions_get"][..],
            "The nightly build on acme/api produced an artifact with id 5561 containing the coverage report. Grab it so I can look at the numbers.",
        ),
        (&["github:actions_list"][..], "what downloadable outputs did nightly build 5521 produce"),
        (&["github:list_notifications"][..], "what should I work on next?"),
        (&["github:mark_all_notifications_read"][..], "zero out my unread count, everything's been seen"),
        (
            &["memory:search_nodes", "memory:read_graph", "memory:open_nodes"][..],
            "anything stored on my preferences?",
        ),
        (
            &[
                "playwright:browser_type",
                "playwright:browser_fill_form",
                "chrome-devtools:type_text",
                "chrome-devtools:fill",
            ][..],
            "type hello into the search box",
        ),
        (&["playwright:browser_network_requests"][..], "which xhr calls did the page make"),
        (
            &["azure-all:cosmos_database_container_item_query"][..],
            "Support says some orders are stuck. From the orders collection in cosmos account cdb-shop, pull the documents whose status is 'pending'.",
        ),
        (
            &["azure-namespace:get_azure_bestpractices"][..],
            "before you write the Functions code, pull Microsoft's recommended coding guidelines for it",
        ),
        (
            &["azure-namespace:azureterraformbestpractices", "azure-namespace:get_azure_bestpractices"][..],
            "we're starting a terraform repo for the landing infra; what naming and state-file guidance applies to azurerm?",
        ),
        (
            &["chrome-devtools:take_screenshot", "chrome-devtools:take_snapshot"][..],
            "capture what's on screen",
        ),
        (
            &["chrome-devtools:performance_analyze_insight"][..],
            "dig deeper into the render-blocking finding from that recording",
        ),
        (&["everything:toggle-subscriber-updates"][..], "turn off the fake resource update notifications"),
        (
            &["github:get_dependabot_alert"][..],
            "vuln bot warnnig #31 in acme/shop: which pakage, severity and patched version?",
        ),
        (&["memory:read_graph"][..], "print every entity, relation and note you hold"),
    ] {
        any_in_top3_of_all(&keys, tools, query);
    }
}

/// Asserts that one of `tools` (`catalog:tool`), or what the intent report counts as good as it
/// (the twin of a server's tool), is in the top 3 for `query` with all 16 public catalogs loaded.
fn any_in_top3_of_all(keys: &std::collections::HashSet<String>, tools: &[&str], query: &str) {
    let intent = crate::intents::Intent {
        catalog: tools[0].split_once(':').map(|(c, _)| c.to_owned()).unwrap_or_default(),
        kind: "paraphrase".to_owned(),
        query: query.to_owned(),
        expect: tools.iter().map(|t| (*t).to_owned()).collect(),
    };
    let acceptable = crate::intents::acceptable_all(&intent, keys);
    let hits: Vec<&str> =
        crate::support::public_catalog().search(query, 3).iter().map(|e| e.id.as_str()).collect();
    assert!(
        hits.iter().any(|h| acceptable.contains(h.strip_prefix("openclaw:").unwrap_or(h))),
        "{query}: {hits:?}"
    );
}

#[test]
fn other_products_values_and_reversals_reach_the_catalogs_concepts() {
    // The vocabulary's later passes, written from the catalogs alone: other products' names for
    // the same job (a Discourse thread, an HSM archive), requests made of values rather than
    // actions (`general-purpose v2, LRS`, `newest first`), questions and reversals (`sever the
    // connection`). Tuning-source intents that rank their tool in the top 3 only with them. Over
    // one catalog:
    for (catalog, tools, query) in [
        (
            "azure-all",
            &["managedlustre_fs_blob_autoexport_create"][..],
            "keep mirroring edits from cfd-scratch out to its HSM archive, ongoing",
        ),
        ("github", &["get_discussion"][..], "open forum post #45 in acme/web: full text plus who started it"),
        (
            "azure-namespace",
            &["storage"][..],
            "Need somewhere to dump nightly Parquet exports. Set up stexports01 in rg-core as general-purpose v2, LRS redundancy, hot access tier.",
        ),
        (
            "azure-namespace",
            &["sql"][..],
            "logical MSSQL host sqlh-mt in rg-mt, catalog tenants01: current tier and max size",
        ),
        (
            "github",
            &["add_issue_comment"][..],
            "The fix for acme/api #512 shipped in v2.3.1. Let the reporter know on that ticket and thank them for the repro.",
        ),
        (
            "github-legacy-npm",
            &["search_repositories"][..],
            "any decent open-source CRDT libraries on GitHub written in Rust?",
        ),
        ("azure-namespace", &["communication"][..], "text a verification code to a customer's phone"),
        ("github", &["list_releases"][..], "all the published drops of acme/cli, newest first"),
    ] {
        any_in_top3_of_public(catalog, tools, query);
    }
    // With all 16 loaded:
    let keys = crate::intents::tool_keys();
    for (tools, query) in [
        (
            &["github:get_label"][..],
            "hex code and description text behind the 'perf-regression' triage tag in acme/api",
        ),
        (&["github:get_label"][..], "hex code + description for acme/web's needs-triage label?"),
        (&["github-legacy-npm:search_code"][..], "where on GitHub is 'func NewRouter(' used?"),
        (
            &["memory:delete_relations"][..],
            "the org chart changed: sever the 'reports to' connection from Alice to Bob but keep both people",
        ),
        (
            &["memory:delete_relations"][..],
            "remove the conection saying Omar works_on Project Atlas, he moved teams",
        ),
        (
            &["azure-all:foundryextensions_openai_models-list", "azure-all:foundryextensions_resource_get"][..],
            "what LLMs are currently deployed on ai-hub-prod, resource group rg-ai",
        ),
        (
            &["atlassian:confluence_get_page_template"][..],
            "what does the prebuilt layout 3321 contain? storage format please",
        ),
    ] {
        any_in_top3_of_all(&keys, tools, query);
    }
}
