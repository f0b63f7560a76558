// A short English text (written for this project) from which the tiny tokenizer learns its
// merges, so common words become single tokens and prompts are not all one byte per token.
export const CORPUS = `
The model answers the question in a few words. Then it stops and waits for the next request.
A worker loads the model once, reports when it is ready, and serves each request in turn.
The gateway checks the key, counts the tokens, and sends the answer back to the caller.
This is a tiny model with random weights: it is here for development and tests only.
When the queue is full the service says so, and the client can try again in a moment.
Every token that the model generates is sent to the client as soon as it is ready.
The quick brown fox jumps over the lazy dog, and the dog does not seem to mind at all.
Hello world! How are you today? I am fine, thank you, and how is the weather where you are?
`;
