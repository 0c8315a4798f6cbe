// The command line of a bench script: `--name value` options and `--name` flags.
export const argv = process.argv.slice(2)

export const option = (name, fallback) => {
  const at = argv.indexOf(`--${name}`)
  return at === -1 ? fallback : argv[at + 1]
}

export const flag = (name) => argv.includes(`--${name}`)
