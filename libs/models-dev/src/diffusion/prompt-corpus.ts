// Image prompts (written for this project) added to the shared corpus when the CLIP-style
// tokenizer learns its merges, so the words people type into a text-to-image API, not only the
// words of service messages, become single tokens. A word must occur at least twice to be learned.
export const PROMPT_CORPUS = `
a photo of a cat sitting on a red chair, soft light, high detail
a photo of a dog sitting on a chair in the garden, sharp focus
an oil painting of a lighthouse at sunset, dramatic clouds, by the sea
an oil painting of a red boat on the sea at night, detailed
a watercolor painting of a small house in the forest, morning light
a watercolor drawing of a cat in the forest, soft colors
a portrait of an old man with a beard, black and white photo
a portrait of a young woman in a red dress, studio light
a futuristic city at night, neon lights, rain on the street
a city street in the morning, people walking, photo
a bowl of fruit on a wooden table, still life painting
a wooden table with a red apple and a cup of coffee
a dog running on the beach at sunset, golden hour, photo
a cat and a dog on the beach, high detail
a mountain landscape with a lake and snow, wide angle photo
a landscape of green hills and a blue sky with white clouds
`;
