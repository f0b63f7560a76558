// The tiny Llama's chat template: the well-known ChatML form (as Qwen and SmolLM publish it), so
// the llm worker's chat completions run on the development model the way they run on a real
// chat model. `<|im_start|>`/`<|im_end|>` are not tokens of the tiny vocabulary: they are
// tokenized as text, which changes nothing for a random-weight model and keeps its vocabulary
// (and so every other test's numbers) as it was.
export const CHATML_CHAT_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
