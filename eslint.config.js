// Type-aware lint: the rules that matter most in an asynchronous controller (no forgotten promises,
// no misused async callbacks) need the type checker.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // .dependency-cruiser.cjs is the import rules' configuration (CommonJS, as the tool loads it), not program code.
  {
    ignores: [
      "dist/",
      ".cache/",
      ".run/",
      "node_modules/",
      "test/cluster/",
      "test/fixtures/exampleProvider/",
      ".dependency-cruiser.cjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
);
