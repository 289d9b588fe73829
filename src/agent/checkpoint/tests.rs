use super::*;

#[test]
fn a_sealed_checkpoint_opens_again_as_it_was_and_its_json_is_kept_byte_for_byte() {
    let call = ToolCall {
        id: "c1".into(),
        tool: "bash".into(),
        args: serde_json::json!({ "command": "make" }),
    };
    let checkpoint = Checkpoint {
        conversation: vec![Message::User { text: "go".into() }],
        calls: vec![call],
        results: vec![None],
        parked: 0,
        model: serde_json::json!({ "step": 3 }),
        turn: 2,
        started: vec![0],
        idle: false,
        agents: Vec::new(),
        sub_agents: 0,
    };
    let saved = checkpoint.saved();
    assert_eq!(saved.json(), serde_json::to_string(&checkpoint).unwrap());
    let opened = Checkpoint::from_saved(&saved).unwrap();
    assert_eq!(opened.calls, checkpoint.calls);
    assert_eq!((opened.turn, opened.started), (2, vec![0]));
    let kept = SavedCheckpoint::from_json(saved.json().to_string()).unwrap();
    assert_eq!(kept.json(), saved.json());
}

#[test]
fn calls_that_are_the_last_messages_are_written_once_and_read_back_from_it() {
    let call = ToolCall {
        id: "c1".into(),
        tool: "write_file".into(),
        args: serde_json::json!({ "path": "a.txt", "content": "only once\n" }),
    };
    let mut checkpoint = Checkpoint {
        conversation: vec![
            Message::User { text: "go".into() },
            Message::Assistant {
                text: String::new(),
                calls: vec![call.clone()],
            },
        ],
        calls: vec![call.clone()],
        results: vec![None],
        parked: 0,
        model: serde_json::Value::Null,
        turn: 1,
        started: Vec::new(),
        idle: false,
        agents: Vec::new(),
        sub_agents: 0,
    };
    let json = serde_json::to_string(&checkpoint).unwrap();
    assert_eq!(json.matches("only once").count(), 1, "{json}");
    let opened = Checkpoint::from_saved(&checkpoint.saved()).unwrap();
    assert_eq!(opened.calls, vec![call.clone()]);
    assert_eq!(serde_json::to_string(&opened).unwrap(), json);
    // Calls of their own (another batch than the last message's) are written as they are.
    checkpoint.calls[0].id = "c2".into();
    let json = serde_json::to_string(&checkpoint).unwrap();
    assert_eq!(json.matches("only once").count(), 2, "{json}");
    assert_eq!(
        Checkpoint::from_saved(&checkpoint.saved()).unwrap().calls[0].id,
        "c2"
    );
}

#[test]
fn a_checkpoint_whose_calls_are_nowhere_or_twice_does_not_open() {
    for json in [
        r#"{"conversation":[{"role":"user","text":"go"}],"calls_in_conversation":true,"results":[],"parked":0,"model":null,"turn":1}"#,
        r#"{"conversation":[],"calls":[],"calls_in_conversation":true,"results":[],"parked":0,"model":null,"turn":1}"#,
        r#"{"conversation":[],"results":[],"parked":0,"model":null,"turn":1}"#,
    ] {
        let saved = SavedCheckpoint::from_json(json.into()).unwrap();
        assert!(Checkpoint::from_saved(&saved).is_err(), "{json}");
    }
}

#[test]
fn a_standing_kept_as_json_reads_back_as_the_same_checkpoint() {
    let call = ToolCall {
        id: "c1".into(),
        tool: "bash".into(),
        args: serde_json::json!({ "command": "make" }),
    };
    let result = Message::Tool {
        call_id: "c1".into(),
        tool: "bash".into(),
        result: CallResult::Ok,
        content: "built".into(),
    };
    let conversation = vec![Message::User { text: "go".into() }];
    let calls = [call.clone(), call];
    let results = [Some(result), None];
    let standing = Standing {
        calls: &calls,
        results: &results,
        parked: 1,
        model: serde_json::json!({ "step": 3 }),
        turn: 2,
        started: &[1],
        idle: false,
    };
    let json = serde_json::to_string(&standing).unwrap();
    let kept: KeptStanding = serde_json::from_str(&json).unwrap();
    let whole = standing.checkpoint(&conversation);
    assert_eq!(
        serde_json::to_string(&kept.with_conversation(conversation.clone()).unwrap()).unwrap(),
        serde_json::to_string(&whole).unwrap()
    );
    // Kept beside a conversation whose last message asks for other calls, they are
    // written out.
    let json = serde_json::to_string(&standing.beside(&conversation)).unwrap();
    assert!(json.contains(r#""calls":["#), "{json}");
    let kept: KeptStanding = serde_json::from_str(&json).unwrap();
    assert_eq!(
        serde_json::to_string(&kept.with_conversation(conversation).unwrap()).unwrap(),
        serde_json::to_string(&whole).unwrap()
    );
}

#[test]
fn a_standing_kept_beside_the_message_that_asked_for_its_calls_does_not_write_them_again() {
    let call = ToolCall {
        id: "c1".into(),
        tool: "write_file".into(),
        args: serde_json::json!({ "path": "a", "content": "a long text" }),
    };
    let conversation = vec![
        Message::User { text: "go".into() },
        Message::Assistant {
            text: String::new(),
            calls: vec![call.clone()],
        },
    ];
    let Some(Message::Assistant { calls, .. }) = conversation.last() else {
        unreachable!()
    };
    let standing = Standing {
        calls,
        results: &[None],
        parked: 0,
        model: serde_json::Value::Null,
        turn: 1,
        started: &[],
        idle: false,
    };
    let json = serde_json::to_string(&standing.beside(&conversation)).unwrap();
    assert!(
        json.contains(r#""calls_in_conversation":true"#) && !json.contains("a long text"),
        "{json}"
    );
    let kept: KeptStanding = serde_json::from_str(&json).unwrap();
    let back = kept.with_conversation(conversation.clone()).unwrap();
    assert_eq!(back.calls, vec![call]);
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&standing.checkpoint(&conversation)).unwrap()
    );
    // Read beside a conversation whose last message asks for nothing, it does not open.
    let kept: KeptStanding = serde_json::from_str(&json).unwrap();
    assert!(kept.with_conversation(conversation[..1].to_vec()).is_err());
}

#[test]
fn a_driver_gets_a_restored_session_with_titles_and_the_interrupted_call() {
    let call = ToolCall {
        id: "c1".into(),
        tool: "bash".into(),
        args: serde_json::json!({ "command": "make" }),
    };
    let checkpoint = Checkpoint {
        conversation: vec![
            Message::User { text: "go".into() },
            Message::Assistant {
                text: String::new(),
                calls: vec![call.clone()],
            },
        ],
        calls: vec![call],
        results: vec![None],
        parked: 0,
        model: serde_json::Value::Null,
        turn: 1,
        started: vec![0],
        idle: false,
        agents: Vec::new(),
        sub_agents: 0,
    };
    let restored = checkpoint.restored_session();
    assert_eq!(restored.messages, 2);
    assert!(restored.turn_goes_on);
    assert_eq!(
        restored.entries,
        vec![
            RestoredEntry::User { text: "go".into() },
            RestoredEntry::Interrupted {
                call_id: "c1".into(),
                title: "$ make".into()
            }
        ]
    );
}
